#pragma once

// One thread's Redis connection for the worker SDK: connects lazily (to the node serving the
// queue's keys), reconnects after a failure, and runs Lua scripts (redis::Script).

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/common/backoff.hpp"
#include "rowpump/common/redis/redis.hpp"
#include "rowpump/common/redis/script.hpp"

namespace rowpump::details {

using std::chrono::milliseconds;

// Waits between attempts while Redis is away: 100 ms doubling to 2 s.
inline Backoff redis_backoff() {
    return Backoff(milliseconds{100}, milliseconds{2000});
}

// Sleeps for `duration`, or less once `stop` is set (checked every 50 ms).
void sleep_unless(milliseconds duration, const std::atomic<bool>& stop);

class Session {
public:
    // For the keys of `queue`, which all live on one node (see common/keys.hpp).
    Session(RedisAddress address, const std::string& queue);

    // Any of these throws redis::IoError (and forgets the connection, so the next call
    // reconnects) or redis::ReplyError (the connection stays usable).
    redis::Reply command(const std::vector<std::string>& args);
    // For blocking commands: makes sure the socket timeout exceeds the command's own.
    redis::Reply blocking_command(const std::vector<std::string>& args, milliseconds block);
    std::vector<redis::Reply> pipeline(const std::vector<std::vector<std::string>>& commands);
    // redis::Script::eval: EVALSHA, falling back to EVAL after a Redis restart. When that EVAL
    // is refused (a user that may run only loaded scripts, docs/operations.md "Least privilege"),
    // throws a redis::ReplyError that says so: the callers retry with backoff, and the dispatcher
    // loads the scripts again when it finds them gone.
    redis::Reply eval(const redis::Script& script, const std::vector<std::string>& keys,
                      const std::vector<std::string>& args);
    // redis::Script::load, so the first EVALSHAs find the scripts; a user that may not load
    // scripts (NOPERM) relies on the dispatcher, which loads them all.
    void load(const std::vector<const redis::Script*>& scripts);

    // Pipelining by hand, for replies that must be looked at one by one.
    void append(const std::vector<std::string>& args, milliseconds block = milliseconds{0});
    redis::Reply read_reply();

    void reset() { connection_.reset(); }
    // The node this session talks to (connecting if it has no connection).
    RedisEndpoint node();

private:
    redis::Connection& connection(milliseconds min_timeout);
    template <class F>
    auto guarded(milliseconds min_timeout, F&& f);

    RedisAddress address_;
    std::string route_;  // a key of the queue: where the connection goes
    std::optional<redis::Connection> connection_;
    milliseconds timeout_{0};
};

}  // namespace rowpump::details
