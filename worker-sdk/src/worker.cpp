#include "rowpump/worker.hpp"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "fetcher.hpp"
#include "membership.hpp"
#include "options.hpp"
#include "outcome_check.hpp"
#include "reporter.hpp"
#include "rowpump/common/protocol/messages.hpp"
#include "rowpump/common/protocol/protocol_version.hpp"
#include "serve_loop.hpp"
#include "session_pool.hpp"
#include "worker_keys.hpp"
#include "worker_log.hpp"

namespace rowpump {

static_assert(std::atomic<bool>::is_always_lock_free, "stop() must be async-signal-safe");

// The parts of a worker, each holding references to the ones declared before it; the
// membership is declared last, so it leaves the queue before anything it uses goes away.
struct Worker::Impl {
    explicit Impl(WorkerOptions raw)
        : options(details::validated(std::move(raw))),
          keys(options.queue, options.worker_id),
          log(options.log, options.worker_id),
          declared(options.queue),
          pool(options.redis, options.queue),
          held(keys, log),
          fetcher(options, keys, held, log, stop_requested),
          reporter(options, keys, log, stop_requested),
          membership(options, keys, declared, reporter, log, stop_requested) {}

    void serve_on_threads(const Handler& handler);

    const WorkerOptions options;
    const details::WorkerKeys keys;
    std::atomic<bool> stop_requested{false};
    details::WorkerLog log;
    details::DeclaredValues declared;
    details::SessionPool pool;  // for the lower-level calls
    details::HeldTasks held;
    details::Fetcher fetcher;
    details::Reporter reporter;
    details::Membership membership;
};

// One ServeLoop per thread; the first exception stops the others and is rethrown.
void Worker::Impl::serve_on_threads(const Handler& handler) {
    std::mutex error_mutex;
    std::exception_ptr error;
    // Shared with handler calls past their deadline, which may end after run() returned.
    const auto shared_handler = std::make_shared<const Handler>(handler);
    auto serve = [&] {
        try {
            details::ServeLoop(options, shared_handler, fetcher, reporter, declared, log,
                               stop_requested)
                .run();
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
            stop_requested.store(true);
        }
    };
    std::vector<std::thread> threads;
    try {
        for (int i = 0; i < options.threads; ++i) threads.emplace_back(serve);
    } catch (...) {
        stop_requested.store(true);
        for (auto& t : threads) t.join();
        membership.leave();
        throw;
    }
    for (auto& t : threads) t.join();
    membership.leave();
    if (error) std::rethrow_exception(error);
    const auto superseded = membership.superseded();
    if (!superseded.empty()) throw Error(superseded);
}

const char* version() noexcept {
    return ROWPUMP_VERSION;
}

int protocol_version() noexcept {
    return protocol::kProtocolVersion;
}

Worker::Worker(WorkerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Worker::~Worker() = default;

void Worker::run(const Handler& handler) {
    if (!handler) throw Error("run: the handler is empty");
    if (!impl_->membership.join(true)) return;
    impl_->serve_on_threads(handler);
}

void Worker::stop() noexcept {
    impl_->stop_requested.store(true, std::memory_order_relaxed);
}

bool Worker::stopping() const noexcept {
    return impl_->stop_requested.load(std::memory_order_relaxed);
}

std::optional<Task> Worker::fetch(milliseconds timeout) {
    impl_->membership.join(false);
    return impl_->pool.run([&](details::Session& s) { return impl_->fetcher.fetch(s, timeout); });
}

bool Worker::complete(const Task& task, const Outcome& outcome) {
    impl_->membership.join(false);
    auto problem = impl_->declared.problem(outcome);
    if (!problem.empty()) throw Error(problem);
    const std::vector<details::Report> reports{{task, details::done_message(task, outcome)}};
    const bool accepted = impl_->pool.run(
        [&](details::Session& s) { return impl_->reporter.report(s, reports) == 1; });
    impl_->held.release(protocol::ready_message(task));
    return accepted;
}

void Worker::extend(const Task& task, milliseconds lease) {
    if (lease.count() <= 0) throw Error("extend: the lease must be positive");
    impl_->membership.join(false);
    protocol::Done done;
    done.task = task;
    done.verb = Verb::extend;
    done.lease = lease;
    auto text = protocol::format_done(done);
    impl_->pool.run([&](details::Session& s) {
        return s.command({"RPUSH", impl_->keys.queue.done, text}).integer();
    });
}

const std::string& Worker::worker_id() const {
    return impl_->options.worker_id;
}

std::uint64_t Worker::bad_messages() const noexcept {
    return impl_->fetcher.bad_messages();
}

}  // namespace rowpump
