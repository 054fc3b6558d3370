#include "serve_loop.hpp"

#include <chrono>
#include <utility>

#include "rowpump/common/log_text.hpp"
#include "rowpump/common/protocol/messages.hpp"

namespace rowpump::details {

namespace {

// Reported tasks are no longer held, whatever became of the report.
class Released {
public:
    Released(HeldTasks& held, const std::vector<Report>& reports)
        : held_(held), reports_(reports) {}
    ~Released() {
        for (const auto& r : reports_) held_.release(protocol::ready_message(r.task));
    }
    Released(const Released&) = delete;
    Released& operator=(const Released&) = delete;

private:
    HeldTasks& held_;
    const std::vector<Report>& reports_;
};

}  // namespace

Outcome run_handler(const Handler& handler, const Task& task) {
    try {
        return handler(task);
    } catch (const std::exception& e) {
        return Outcome::retry(e.what());
    } catch (...) {
        return Outcome::retry("the handler threw an exception that is not a std::exception");
    }
}

ServeLoop::ServeLoop(const WorkerOptions& options, std::shared_ptr<const Handler> handler,
                     Fetcher& fetcher, Reporter& reporter, const DeclaredValues& declared,
                     WorkerLog& log, const std::atomic<bool>& stop)
    : options_(options),
      handler_(std::move(handler)),
      fetcher_(fetcher),
      reporter_(reporter),
      declared_(declared),
      log_(log),
      stop_(stop),
      session_(options.redis, options.queue) {}

void ServeLoop::run() {
    for (;;) {
        if (!hand_.empty()) {
            handle_next();
            continue;
        }
        if (stop_.load(std::memory_order_relaxed)) return;
        fetch_one();
    }
}

void ServeLoop::handle_next() {
    Task task = std::move(hand_.front());
    hand_.pop_front();
    const auto started = Clock::now();
    auto outcome = handle(task);
    const auto handled = Clock::now() - started;
    handling_ += handled;
    auto done = checked_done_message(task, outcome, declared_, handled);
    reports_.push_back({std::move(task), std::move(done)});
    if (hand_.empty()) hand_ = report_and_fetch(std::exchange(reports_, {}));
}

Outcome ServeLoop::handle(const Task& task) {
    std::string problem;
    const auto deadline = task_deadline(task, options_.timeout, problem);
    if (!problem.empty()) log_.line("task '" + log_text(task.id) + "': " + problem);
    if (!deadline) return run_handler(*handler_, task);
    if (!handler_thread_ || handler_thread_->abandoned()) handler_thread_.emplace();
    // The call owns what it uses: past the deadline it may outlive this loop.
    auto outcome = handler_thread_->run(
        [handler = handler_, task]() { return run_handler(*handler, task); }, *deadline);
    if (outcome) return std::move(*outcome);
    task.cancellation.cancel();
    return Outcome::retry("timeout");
}

int ServeLoop::take_count() const {
    return options_.batch == 0 ? adaptive_.next() : options_.batch;
}

// With nothing in hand: a blocking fetch, or a pause while Redis is away.
void ServeLoop::fetch_one() {
    try {
        if (auto task = fetcher_.fetch(session_, options_.fetch_timeout)) {
            hand_.push_back(std::move(*task));
        }
        backoff_.reset();
        log_.redis_ok();
        return;
    } catch (const redis::IoError& e) {
        log_.redis_failed(e);
    } catch (const redis::ReplyError& e) {
        log_.redis_failed(e);
    }
    sleep_unless(backoff_.next(), stop_);
}

// The reports and the next fetch share one round trip: on a busy queue a batch of tasks costs
// one.
std::deque<Task> ServeLoop::report_and_fetch(const std::vector<Report>& reports) {
    const Released released(fetcher_.held(), reports);
    if (stop_.load(std::memory_order_relaxed)) {
        reporter_.report_until_done(session_, reports, false);
        return {};
    }
    adaptive_.handled(static_cast<int>(reports.size()), std::exchange(handling_, {}));
    bool reported = false;
    std::vector<std::string> next;
    try {
        fetcher_.held().give_back_orphans(session_);
        const int count = take_count();
        const auto started = Clock::now();
        reporter_.append_report(session_, reports);
        fetcher_.append_fetch(session_, count);
        // The report's reply times a round trip even when the BLMOVE behind it then waits.
        Clock::duration round_trip{};
        try {
            reporter_.read_report(session_, reports);
            round_trip = Clock::now() - started;
            reported = true;
        } catch (const redis::ReplyError&) {
            // NOSCRIPT after a Redis restart, or worse: retried below, after the fetch reply.
        }
        next = fetcher_.read_fetch(session_, count);
        if (reported) adaptive_.fetched(count, static_cast<int>(next.size()), round_trip);
        log_.redis_ok();
    } catch (const redis::IoError& e) {
        log_.redis_failed(e);
        fetcher_.held().fetch_reply_lost();  // the fetch was sent behind the reports
        if (!reported) reporter_.report_until_done(session_, reports, true);
        return {};
    } catch (const redis::ReplyError& e) {
        log_.redis_failed(e);  // the fetch failed; the next one (a plain BLMOVE) waits for Redis
    }
    if (!reported) reporter_.report_until_done(session_, reports, false);
    return take_fetched(std::move(next));
}

// Fetched messages that turn out malformed are set aside, which may fail in turn.
std::deque<Task> ServeLoop::take_fetched(std::vector<std::string> messages) {
    try {
        return fetcher_.take_all(session_, std::move(messages));
    } catch (const redis::IoError& e) {
        log_.redis_failed(e);
    } catch (const redis::ReplyError& e) {
        log_.redis_failed(e);
    }
    return {};
}

}  // namespace rowpump::details
