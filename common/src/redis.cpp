#include "rowpump/common/redis.hpp"

#include <hiredis/hiredis.h>
#include <poll.h>

#include <cerrno>

namespace rowpump::redis {

namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
    return tv;
}

void check_error(const redisReply* r) {
    if (r->type == REDIS_REPLY_ERROR) throw ReplyError(std::string(r->str, r->len));
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

Connection::Connection(redisContext* context, std::chrono::milliseconds timeout)
    : context_(context) {
    set_timeout(timeout);
}

Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

Connection Connection::connect(const RedisAddress& address,
                               std::chrono::milliseconds command_timeout) {
    redisContext* raw = redisConnectWithTimeout(address.host.c_str(), address.port,
                                                to_timeval(address.connect_timeout));
    if (raw == nullptr) throw IoError("redis: cannot allocate a connection");
    if (raw->err != 0) {
        std::string what =
            "redis " + address.host + ":" + std::to_string(address.port) + ": " + raw->errstr;
        redisFree(raw);
        throw IoError(what);
    }
    Connection conn(raw, command_timeout);
    // A named user logs in even without a password (an ACL user may be `nopass`): skipping
    // AUTH would run everything as the default user, with its privileges instead.
    if (!address.user.empty()) {
        conn.command({"AUTH", address.user, address.password});
    } else if (!address.password.empty()) {
        conn.command({"AUTH", address.password});
    }
    return conn;
}

void Connection::fail_io(const char* what) {
    broken_ = true;
    std::string detail =
        context_ && context_->errstr[0] != '\0' ? context_->errstr : "connection lost";
    throw IoError(std::string("redis ") + what + ": " + detail);
}

Reply Connection::command(const std::vector<std::string>& args) {
    append(args);
    return read_reply();
}

void Connection::append(const std::vector<std::string>& args) {
    if (broken_) throw IoError("redis: connection is broken");
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
    check_error(static_cast<redisReply*>(raw));
    return reply;
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
}

}  // namespace rowpump::redis
