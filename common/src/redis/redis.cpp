#include "rowpump/common/redis/redis.hpp"

#include <hiredis/hiredis.h>
#include <poll.h>

#include <cerrno>
#include <charconv>

namespace rowpump::redis {

namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
    return tv;
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

void check_error(const redisReply* r) {
    if (r->type == REDIS_REPLY_ERROR) throw ReplyError(std::string(r->str, r->len));
}

Value value_of(const redisReply* r) {
    Value v;
    switch (r->type) {
        case REDIS_REPLY_INTEGER:
            v.type = Value::Type::integer;
            v.integer = r->integer;
            break;
        case REDIS_REPLY_STRING:
        case REDIS_REPLY_STATUS:
            v.type = Value::Type::text;
            v.text.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ARRAY:
            v.type = Value::Type::array;
            for (size_t i = 0; i < r->elements; ++i) v.elements.push_back(value_of(r->element[i]));
            break;
        default:
            break;
    }
    return v;
}

struct Argv {
    explicit Argv(const std::vector<std::string>& args) {
        ptrs.reserve(args.size());
        lens.reserve(args.size());
        for (const auto& a : args) {
            ptrs.push_back(a.data());
            lens.push_back(a.size());
        }
    }
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
};

}  // namespace

std::string to_string(const RedisEndpoint& endpoint) {
    return endpoint.host + ":" + std::to_string(endpoint.port);
}

std::optional<int> parse_port(std::string_view text) {
    int port = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
    if (ec != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535)
        return std::nullopt;
    return port;
}

std::optional<Redirect> parse_redirect(std::string_view error, const std::string& answered_by) {
    Redirect r;
    if (starts_with(error, "ASK ")) {
        r.ask = true;
    } else if (!starts_with(error, "MOVED ")) {
        return std::nullopt;
    }
    const auto slot_at = error.find(' ') + 1;
    const auto node_at = error.find(' ', slot_at);
    const auto colon = error.rfind(':');
    if (node_at == std::string_view::npos || colon == std::string_view::npos || colon < node_at)
        return std::nullopt;
    auto slot = error.substr(slot_at, node_at - slot_at);
    auto [end, ec] = std::from_chars(slot.data(), slot.data() + slot.size(), r.slot);
    auto port = parse_port(error.substr(colon + 1));
    if (ec != std::errc() || end != slot.data() + slot.size() || !port) return std::nullopt;
    r.node.host = std::string(error.substr(node_at + 1, colon - node_at - 1));
    if (r.node.host.empty()) r.node.host = answered_by;
    r.node.port = *port;
    return r;
}

bool is_wrong_type(std::string_view error) {
    return starts_with(error, "WRONGTYPE");
}

bool is_unavailable(std::string_view error) {
    for (std::string_view code :
         {"MOVED ", "TRYAGAIN", "CLUSTERDOWN", "READONLY", "MASTERDOWN", "UNBLOCKED", "LOADING"}) {
        if (starts_with(error, code)) return true;
    }
    return false;
}

void ReplyDeleter::operator()(redisReply* r) const noexcept {
    freeReplyObject(r);
}

bool Reply::is_nil() const {
    return raw_->type == REDIS_REPLY_NIL;
}

std::int64_t Reply::integer() const {
    check_error(raw_.get());
    if (raw_->type != REDIS_REPLY_INTEGER) throw ReplyError("expected an integer reply");
    return raw_->integer;
}

std::string Reply::string() const {
    check_error(raw_.get());
    if (raw_->type != REDIS_REPLY_STRING && raw_->type != REDIS_REPLY_STATUS) {
        throw ReplyError("expected a string reply");
    }
    return std::string(raw_->str, raw_->len);
}

std::optional<std::string> Reply::optional_string() const {
    if (is_nil()) return std::nullopt;
    return string();
}

Value Reply::value() const {
    check_error(raw_.get());
    return value_of(raw_.get());
}

std::vector<std::string> Reply::strings() const {
    check_error(raw_.get());
    if (raw_->type == REDIS_REPLY_NIL) return {};
    if (raw_->type != REDIS_REPLY_ARRAY) throw ReplyError("expected an array reply");
    std::vector<std::string> out;
    out.reserve(raw_->elements);
    for (size_t i = 0; i < raw_->elements; ++i) {
        const redisReply* e = raw_->element[i];
        if (e->type != REDIS_REPLY_STRING && e->type != REDIS_REPLY_STATUS) {
            throw ReplyError("expected an array of strings");
        }
        out.emplace_back(e->str, e->len);
    }
    return out;
}

void Connection::ContextDeleter::operator()(redisContext* c) const noexcept {
    redisFree(c);
}

Connection::Connection(redisContext* context, RedisEndpoint node, std::chrono::milliseconds timeout)
    : context_(context), node_(std::move(node)), timeout_(timeout) {
    set_timeout(timeout);
}

Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

Connection Connection::open(const RedisEndpoint& node, const RedisAddress& login,
                            std::chrono::milliseconds command_timeout) {
    redisContext* raw =
        redisConnectWithTimeout(node.host.c_str(), node.port, to_timeval(login.connect_timeout));
    if (raw == nullptr) throw IoError("redis: cannot allocate a connection");
    if (raw->err != 0) {
        std::string what = "redis " + to_string(node) + ": " + raw->errstr;
        redisFree(raw);
        throw IoError(what);
    }
    Connection conn(raw, node, command_timeout);
    // A named user logs in even without a password (an ACL user may be `nopass`): skipping
    // AUTH would run everything as the default user, with its privileges instead.
    if (!login.user.empty()) {
        conn.command({"AUTH", login.user, login.password});
    } else if (!login.password.empty()) {
        conn.command({"AUTH", login.password});
    }
    return conn;
}

// The Sentinel client rules: the node the sentinels name is used only once it says it is the
// master (during a failover they may still name the old one).
void Connection::check_master() {
    const Value role = command({"ROLE"}).value();
    if (role.elements.empty() || role.elements[0].text != "master") {
        broken_ = true;
        throw UnavailableError("redis " + to_string(node_) +
                               ": the sentinels name it master, but it is not (yet)");
    }
}

void Connection::fail_io(const char* what) {
    broken_ = true;
    std::string detail =
        context_ && context_->errstr[0] != '\0' ? context_->errstr : "connection lost";
    throw IoError("redis " + to_string(node_) + " " + what + ": " + detail);
}

void Connection::fail_unavailable(std::string_view error) {
    broken_ = true;
    throw UnavailableError("redis " + to_string(node_) + ": " + std::string(error));
}

// One command to the node an ASK names, preceded by ASKING (cluster spec: "ASK redirection");
// the slot map stays as it is, the resharding is not over.
Reply Connection::follow_ask(std::string_view error, const std::vector<std::string>& args) {
    const auto redirect = parse_redirect(error, node_.host);
    if (!redirect) throw ReplyError(std::string(error));
    try {
        if (!asked_ || asked_->broken() || asked_->node_.host != redirect->node.host ||
            asked_->node_.port != redirect->node.port) {
            asked_ = std::make_unique<Connection>(open(redirect->node, *cluster_login_, timeout_));
        }
        if (asked_->timeout_ < timeout_) asked_->set_timeout(timeout_);
        asked_->append({"ASKING"});
        asked_->append(args);
        asked_->read_reply();
        return asked_->read_reply();
    } catch (const IoError&) {
        broken_ = true;  // callers drop a connection after an IoError
        throw;
    }
}

Reply Connection::command(const std::vector<std::string>& args) {
    append(args);
    return read_reply();
}

void Connection::append(const std::vector<std::string>& args) {
    if (broken_) throw IoError("redis: connection is broken");
    if (cluster_login_) unanswered_.push_back(args);
    Argv argv(args);
    if (redisAppendCommandArgv(context_.get(), static_cast<int>(args.size()), argv.ptrs.data(),
                               argv.lens.data()) != REDIS_OK) {
        fail_io("append");
    }
}

Reply Connection::read_reply() {
    if (broken_) throw IoError("redis: connection is broken");
    void* raw = nullptr;
    if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr) fail_io("read");
    Reply reply(static_cast<redisReply*>(raw));
    std::vector<std::string> args;
    if (cluster_login_ && !unanswered_.empty()) {
        args = std::move(unanswered_.front());
        unanswered_.pop_front();
    }
    const auto* r = static_cast<redisReply*>(raw);
    if (r->type != REDIS_REPLY_ERROR) return reply;
    const std::string_view error(r->str, r->len);
    if (cluster_login_ && error.substr(0, 4) == "ASK ") return follow_ask(error, args);
    if (is_unavailable(error)) fail_unavailable(error);
    throw ReplyError(std::string(error));
}

std::vector<Reply> Connection::read_replies(std::size_t count) {
    std::vector<Reply> replies;
    replies.reserve(count);
    std::optional<ReplyError> first_error;
    for (std::size_t i = 0; i < count; ++i) {
        try {
            replies.push_back(read_reply());
        } catch (const ReplyError& e) {
            if (!first_error) first_error = e;
        }
    }
    if (first_error) throw *first_error;
    return replies;
}

std::optional<Reply> Connection::wait_reply(int wake_fd) {
    if (broken_) throw IoError("redis: connection is broken");
    for (;;) {
        void* raw = nullptr;
        // A reply read along with an earlier one may already wait in hiredis' buffer.
        if (redisGetReplyFromReader(context_.get(), &raw) != REDIS_OK) fail_io("read");
        if (raw != nullptr) return Reply(static_cast<redisReply*>(raw));
        pollfd fds[2] = {{context_->fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            fail_io("poll");
        }
        if (fds[1].revents != 0) return std::nullopt;
        if (redisBufferRead(context_.get()) != REDIS_OK) fail_io("read");
    }
}

void Connection::set_timeout(std::chrono::milliseconds timeout) {
    if (redisSetTimeout(context_.get(), to_timeval(timeout)) != REDIS_OK) fail_io("set timeout");
    timeout_ = timeout;
}

}  // namespace rowpump::redis
