#include "reporter.hpp"

#include <chrono>
#include <optional>
#include <thread>

#include "rowpump/common/log_text.hpp"
#include "rowpump/common/protocol/messages.hpp"
#include "rowpump/common/protocol/scripts.hpp"

namespace rowpump::details {

std::vector<std::string> report_args(const std::vector<Report>& reports) {
    std::vector<std::string> args;
    args.reserve(2 * reports.size());
    for (const auto& r : reports) {
        args.push_back(protocol::ready_message(r.task));
        args.push_back(r.done);
    }
    return args;
}

std::string tasks_text(const std::vector<Report>& reports) {
    const std::string first = "'" + log_text(reports.front().task.id) + "'";
    if (reports.size() == 1) return "task " + first;
    return std::to_string(reports.size()) + " tasks (" + first + ", ...)";
}

std::string refused_text(const std::vector<Report>& reports, std::int64_t accepted) {
    const auto refused = static_cast<std::int64_t>(reports.size()) - accepted;
    if (refused == 0) return "";
    if (reports.size() == 1) {
        return "the report on " + tasks_text(reports) +
               " came too late: the task had been taken back from this worker";
    }
    return "the reports on " + std::to_string(refused) + " of " + tasks_text(reports) +
           " came too late: the tasks had been taken back from this worker";
}

Reporter::Reporter(const WorkerOptions& options, const WorkerKeys& keys, WorkerLog& log,
                   const std::atomic<bool>& stop)
    : options_(options), keys_(keys), log_(log), stop_(stop) {}

std::int64_t Reporter::report(Session& s, const std::vector<Report>& reports) {
    const auto accepted = s.eval(protocol::kCompleteScript, {keys_.processing, keys_.queue.done},
                                 report_args(reports))
                              .integer();
    done_.fetch_add(accepted, std::memory_order_relaxed);
    return accepted;
}

void Reporter::append_report(Session& s, const std::vector<Report>& reports) const {
    s.append(protocol::kCompleteScript.evalsha({keys_.processing, keys_.queue.done},
                                               report_args(reports)));
}

void Reporter::read_report(Session& s, const std::vector<Report>& reports) {
    const auto accepted = s.read_reply().integer();
    done_.fetch_add(accepted, std::memory_order_relaxed);
    log_refused(reports, accepted, false);
}

void Reporter::log_refused(const std::vector<Report>& reports, std::int64_t accepted,
                           bool maybe_sent) const {
    // After a broken connection a refusal may only mean that the first attempt got through.
    if (maybe_sent) return;
    auto text = refused_text(reports, accepted);
    if (!text.empty()) log_.line(text);
}

void Reporter::report_until_done(Session& s, const std::vector<Report>& reports, bool maybe_sent) {
    using Clock = std::chrono::steady_clock;
    auto backoff = redis_backoff();
    std::optional<Clock::time_point> failing_since;
    auto failed = [&](const std::exception& e) {
        log_.redis_failed(e);
        auto now = Clock::now();
        if (!failing_since) {
            failing_since = now;
            log_.line("report on " + tasks_text(reports) + " failed (" + e.what() + "); retrying");
        }
        // Past the heartbeat TTL the dispatcher takes the tasks back anyway.
        return stop_.load() && now - *failing_since >= options_.heartbeat_ttl;
    };
    for (;;) {
        try {
            log_refused(reports, report(s, reports), maybe_sent || failing_since);
            log_.redis_ok();
            return;
        } catch (const redis::IoError& e) {
            if (failed(e)) break;
        } catch (const redis::ReplyError& e) {
            if (failed(e)) break;
        }
        std::this_thread::sleep_for(backoff.next());
    }
    log_.line("gave up reporting on " + tasks_text(reports) + "; they stay in " + keys_.processing +
              " until the dispatcher takes them back");
}

}  // namespace rowpump::details
