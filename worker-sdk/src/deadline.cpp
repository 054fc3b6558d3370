#include "deadline.hpp"

#include <algorithm>
#include <utility>

namespace rowpump::details {

std::optional<milliseconds> task_deadline(const Task& task, milliseconds worker_timeout,
                                          std::string& problem) {
    problem.clear();
    const std::optional<milliseconds> fallback =
        worker_timeout.count() > 0 ? std::optional<milliseconds>(worker_timeout) : std::nullopt;
    auto it = task.fields.find(kTimeoutField);
    if (it == task.fields.end()) return fallback;
    const auto& text = it->second;
    const bool digits =
        text && !text->empty() && text->size() <= 10 &&
        std::all_of(text->begin(), text->end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits) {
        const long long ms = std::stoll(*text);
        if (ms > 0 && ms <= (1LL << 31)) return milliseconds(ms);
    }
    problem = std::string("ignored ") + kTimeoutField +
              " (not a positive number of milliseconds up to 2^31)";
    return fallback;
}

HandlerThread::HandlerThread()
    : state_(std::make_shared<State>()), thread_([state = state_] { loop(*state); }) {}

HandlerThread::~HandlerThread() {
    {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->quit = true;
    }
    state_->changed.notify_all();
    if (abandoned_) {
        thread_.detach();  // it holds the state; it ends once the late call returns
    } else {
        thread_.join();
    }
}

void HandlerThread::loop(State& state) {
    std::unique_lock<std::mutex> lock(state.mutex);
    for (;;) {
        state.changed.wait(lock, [&] { return state.quit || state.call; });
        if (!state.call) return;
        auto call = std::exchange(state.call, nullptr);
        lock.unlock();
        auto outcome = call();
        call = nullptr;  // what the call holds goes before the next one starts
        lock.lock();
        state.outcome = std::move(outcome);
        state.changed.notify_all();
    }
}

std::optional<Outcome> HandlerThread::run(std::function<Outcome()> call, milliseconds deadline) {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->outcome.reset();
    state_->call = std::move(call);
    state_->changed.notify_all();
    if (state_->changed.wait_for(lock, deadline, [&] { return state_->outcome.has_value(); })) {
        return std::exchange(state_->outcome, std::nullopt);
    }
    abandoned_ = true;
    return std::nullopt;
}

}  // namespace rowpump::details
