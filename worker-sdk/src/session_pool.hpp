#pragma once

// Sessions for the lower-level calls (fetch, complete, extend), which any thread may make:
// each call borrows one, so calls from several threads run side by side.

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "rowpump/worker.hpp"
#include "session.hpp"

namespace rowpump::details {

class SessionPool {
public:
    SessionPool(RedisAddress address, std::string queue)
        : address_(std::move(address)), queue_(std::move(queue)) {}

    // Runs f(Session&) on a borrowed session and returns what it returns. Redis errors
    // become the public API's: ConnectionError (the session reconnects on its next use) or
    // Error.
    template <class F>
    auto run(F&& f);

private:
    // Gives the session back to the pool when the call ends, however it ends.
    class Borrowed {
    public:
        explicit Borrowed(SessionPool& pool) : pool_(pool), session_(pool.take()) {}
        ~Borrowed() { pool_.give_back(std::move(session_)); }
        Borrowed(const Borrowed&) = delete;
        Borrowed& operator=(const Borrowed&) = delete;
        Session& session() { return session_; }

    private:
        SessionPool& pool_;
        Session session_;
    };

    Session take();
    void give_back(Session session) noexcept;

    RedisAddress address_;
    std::string queue_;
    std::mutex mutex_;
    std::vector<Session> idle_;
};

template <class F>
auto SessionPool::run(F&& f) {
    Borrowed borrowed(*this);
    try {
        return f(borrowed.session());
    } catch (const redis::IoError& e) {
        throw ConnectionError(e.what());
    } catch (const redis::ReplyError& e) {
        throw Error(std::string("redis: ") + e.what());
    }
}

}  // namespace rowpump::details
