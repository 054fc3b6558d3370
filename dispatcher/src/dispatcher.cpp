#include "rowpump/dispatcher/dispatcher.hpp"

#include "queue_runner.hpp"

namespace rowpump {

Dispatcher::Dispatcher(const Config& config) : config_(config) {}

Dispatcher::~Dispatcher() {
    stop();
    join();
}

void Dispatcher::start() {
    for (const auto& queue : config_.queues) {
        threads_.emplace_back([this, &queue] { QueueRunner(config_, queue, stopping_, mutex_, wake_).run(); });
    }
}

void Dispatcher::stop() noexcept {
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    } catch (...) {
        stopping_ = true;  // a sleeping queue then wakes at its next timeout
    }
    wake_.notify_all();
}

void Dispatcher::join() {
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
    threads_.clear();
}

}  // namespace rowpump
