#pragma once

// A small owning wrapper over a hiredis 0.14 synchronous context (RESP2), after
// redis-plus-plus: RAII handles, typed errors, optional for "nothing there".
// A connection goes to the node that serves a key now (connect_for, defined with the routes in
// redis_route.cpp: the server, the Sentinel group's master, or the Cluster node owning the key's
// slot). Replies that say the node no longer serves it (a failover, a resharding) break the
// connection like a network error, so every caller's reconnect-with-backoff asks again; an ASK
// redirect is followed.

#include <chrono>
#include <cstdint>
#include <deque>
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
// The node cannot serve the command now: MOVED, TRYAGAIN, CLUSTERDOWN (resharding, Cluster
// failover), READONLY, MASTERDOWN, UNBLOCKED (a Sentinel failover made it a replica),
// LOADING. The connection is broken: reconnecting finds the node that serves the key now.
class UnavailableError : public IoError {
    using IoError::IoError;
};
// The server answered with an error (wrong type, script error, NOAUTH, ...).
class ReplyError : public Error {
    using Error::Error;
};

// Whether an error reply means "this node cannot serve the key now: ask again where it is".
bool is_unavailable(std::string_view error);
// Whether an error reply says the key holds another type than the command needs.
bool is_wrong_type(std::string_view error);

// A MOVED or ASK error's target ("ASK 3999 127.0.0.1:6381"); an empty host means the host of
// the node that answered. nullopt when the text is not one.
struct Redirect {
    bool ask = false;
    int slot = 0;
    RedisEndpoint node;
};
std::optional<Redirect> parse_redirect(std::string_view error, const std::string& answered_by);

// "host:port"
std::string to_string(const RedisEndpoint& endpoint);
// A TCP port (1 to 65535) written in decimal, and nothing else; nullopt when it is not one.
std::optional<int> parse_port(std::string_view text);

// How long a command may take before the connection counts as broken.
constexpr std::chrono::milliseconds kDefaultCommandTimeout{5000};

struct ReplyDeleter {
    void operator()(redisReply* r) const noexcept;
};

// A reply as plain values, for nested replies (CLUSTER SLOTS, ROLE).
struct Value {
    enum class Type { nil, integer, text, array };
    Type type = Type::nil;
    std::int64_t integer = 0;
    std::string text;  // status or bulk string
    std::vector<Value> elements;
};

class Reply {
public:
    explicit Reply(redisReply* raw) : raw_(raw) {}

    bool is_nil() const;
    std::int64_t integer() const;                        // throws ReplyError unless an integer
    std::string string() const;                          // status or bulk string
    std::vector<std::string> strings() const;            // array of bulk strings (nil array: empty)
    std::optional<std::string> optional_string() const;  // nil -> nullopt
    Value value() const;                                 // any reply but an error

private:
    std::unique_ptr<redisReply, ReplyDeleter> raw_;
};

class Connection {
public:
    // Connects to the node that serves `key` (any key for a command without keys, such as
    // PING) and authenticates; throws IoError or ReplyError. Defined in redis_route.cpp.
    static Connection connect_for(
        const RedisAddress& address, std::string_view key,
        std::chrono::milliseconds command_timeout = kDefaultCommandTimeout);
    // For commands without keys.
    static Connection connect(const RedisAddress& address,
                              std::chrono::milliseconds command_timeout = kDefaultCommandTimeout) {
        return connect_for(address, {}, command_timeout);
    }
    // Exactly this node, with the address's login (`login.host` and the modes are not used).
    static Connection open(const RedisEndpoint& node, const RedisAddress& login,
                           std::chrono::milliseconds command_timeout);

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
    const RedisEndpoint& node() const noexcept { return node_; }

private:
    struct ContextDeleter {
        void operator()(redisContext* c) const noexcept;
    };
    Connection(redisContext* context, RedisEndpoint node, std::chrono::milliseconds timeout);
    [[noreturn]] void fail_io(const char* what);
    [[noreturn]] void fail_unavailable(std::string_view error);
    void check_master();
    Reply follow_ask(std::string_view error, const std::vector<std::string>& args);

    std::unique_ptr<redisContext, ContextDeleter> context_;
    RedisEndpoint node_;
    std::chrono::milliseconds timeout_;
    bool broken_ = false;
    // Cluster only: the login for nodes an ASK names, the commands sent and not yet answered
    // (an ASK names one of them), and the connection to the last node an ASK named.
    std::unique_ptr<RedisAddress> cluster_login_;
    std::deque<std::vector<std::string>> unanswered_;
    std::unique_ptr<Connection> asked_;
};

}  // namespace rowpump::redis
