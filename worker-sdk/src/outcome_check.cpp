#include "outcome_check.hpp"

#include <algorithm>
#include <utility>

#include "rowpump/common/protocol/protocol.hpp"

namespace rowpump::details {

void DeclaredValues::update(const std::string& csv) {
    auto names = protocol::parse_meta({protocol::kMetaValues, csv}).values;
    std::lock_guard<std::mutex> lock(mutex_);
    names_ = std::move(names);
}

std::string DeclaredValues::problem(const Outcome& outcome) const {
    if (outcome.kind() != Verb::success) return "";
    protocol::Done done;
    done.values.assign(outcome.values().begin(), outcome.values().end());
    std::lock_guard<std::mutex> lock(mutex_);
    auto problem = protocol::value_problem(done, names_);
    return problem.empty() ? "" : "queue '" + queue_ + "': " + problem;
}

std::string done_message(const Task& task, const Outcome& outcome,
                         std::optional<milliseconds> handler_ms) {
    protocol::Done done;
    done.task = task;
    done.verb = outcome.kind();
    done.values.assign(outcome.values().begin(), outcome.values().end());
    if (outcome.kind() != Verb::success) done.reason = protocol::clip_reason(outcome.reason());
    if (outcome.delay()) done.delay = std::max(*outcome.delay(), milliseconds{0});
    if (outcome.kind() != Verb::extend) done.handler_ms = handler_ms;
    auto text = protocol::format_done(done);
    if (text.size() > protocol::kMaxMessageBytes) {
        throw Error("the outcome of task '" + task.id + "' is " + std::to_string(text.size()) +
                    " bytes long once encoded; at most " +
                    std::to_string(protocol::kMaxMessageBytes) + " fit in a done message");
    }
    return text;
}

std::string checked_done_message(const Task& task, const Outcome& outcome,
                                 const DeclaredValues& declared,
                                 std::chrono::steady_clock::duration handled) {
    const auto handler_ms = std::chrono::duration_cast<milliseconds>(handled);
    auto problem = declared.problem(outcome);
    if (problem.empty()) {
        try {
            return done_message(task, outcome, handler_ms);
        } catch (const Error& e) {
            problem = e.what();
        }
    }
    return done_message(task, Outcome::retry(problem), handler_ms);
}

}  // namespace rowpump::details
