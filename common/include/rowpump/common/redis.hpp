#pragma once

// A small owning wrapper over a hiredis 0.14 synchronous context (RESP2), after
// redis-plus-plus: RAII handles, typed errors, optional for "nothing there".

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "rowpump/redis_address.hpp"

struct redisContext;
struct redisReply;

namespace rowpump::redis {

// Every Redis failure. Catch IoError to reconnect and retry; anything else is a reply that
// a retry on the same connection would not change.
class Error : public std::runtime_error {
    using std::runtime_error::runtime_error;
};
// The connection failed or broke: reconnect and retry.
class IoError : public Error {
    using Error::Error;
};
// The server answered with an error (wrong type, script error, NOAUTH, ...).
class ReplyError : public Error {
    using Error::Error;
};

// How long a command may take before the connection counts as broken.
constexpr std::chrono::milliseconds kDefaultCommandTimeout{5000};

struct ReplyDeleter {
    void operator()(redisReply* r) const noexcept;
};

class Reply {
public:
    explicit Reply(redisReply* raw) : raw_(raw) {}

    bool is_nil() const;
    std::int64_t integer() const;                        // throws ReplyError unless an integer
    std::string string() const;                          // status or bulk string
    std::vector<std::string> strings() const;            // array of bulk strings (nil array: empty)
    std::optional<std::string> optional_string() const;  // nil -> nullopt

private:
    std::unique_ptr<redisReply, ReplyDeleter> raw_;
};

class Connection {
public:
    // Connects and authenticates; throws IoError or ReplyError.
    static Connection connect(const RedisAddress& address,
                              std::chrono::milliseconds command_timeout = kDefaultCommandTimeout);

    Connection(Connection&&) noexcept;
    Connection& operator=(Connection&&) noexcept;
    ~Connection();

    // One command, one round trip. Throws IoError (connection now broken) or ReplyError.
    Reply command(const std::vector<std::string>& args);

    // Pipelining: append any number of commands, then read one reply per command in order.
    void append(const std::vector<std::string>& args);
    Reply read_reply();

    // Reads every pending pipelined reply; rethrows the first error after draining the rest
    // so the connection stays in step.
    std::vector<Reply> read_replies(std::size_t count);

    // On a subscribed connection: waits for the next message (any reply) until it comes, or
    // until `wake_fd` becomes readable (then nullopt; the caller drains wake_fd). Throws
    // IoError when the connection breaks.
    std::optional<Reply> wait_reply(int wake_fd);

    // For blocking commands: the socket timeout must exceed the command's own timeout.
    void set_timeout(std::chrono::milliseconds timeout);

    bool broken() const noexcept { return broken_; }

private:
    struct ContextDeleter {
        void operator()(redisContext* c) const noexcept;
    };
    Connection(redisContext* context, std::chrono::milliseconds timeout);
    [[noreturn]] void fail_io(const char* what);

    std::unique_ptr<redisContext, ContextDeleter> context_;
    bool broken_ = false;
};

}  // namespace rowpump::redis
