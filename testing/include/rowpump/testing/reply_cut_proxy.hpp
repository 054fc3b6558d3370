#pragma once

// A TCP proxy in front of Redis that cuts one connection at the worst moment for a client:
// the first reply from the server that contains `needle` is not passed on, and both sides of
// that connection are closed. Redis executed the command; its client never learns the result.
// Every other byte, and every later connection, passes through unchanged.

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

namespace rowpump::testing {

class ReplyCutProxy {
public:
    ReplyCutProxy(int target_port, std::string needle);
    ~ReplyCutProxy();
    ReplyCutProxy(const ReplyCutProxy&) = delete;
    ReplyCutProxy& operator=(const ReplyCutProxy&) = delete;

    int port() const { return port_; }
    bool cut() const { return cut_; }  // the reply has been held back and its connection closed
    // Cuts again: the next reply containing `needle` (empty: none; a pass-through proxy).
    void arm(std::string needle);

private:
    void run();

    int listen_fd_ = -1;
    int port_ = 0;
    int target_port_;
    std::mutex mutex_;
    std::string needle_;  // guarded by mutex_
    std::atomic<bool> cut_{false};
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace rowpump::testing
