#include "fetcher.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "rowpump/common/log_text.hpp"
#include "rowpump/common/protocol/messages.hpp"
#include "rowpump/common/protocol/report_rules.hpp"
#include "rowpump/common/protocol/scripts.hpp"

namespace rowpump::details {

using Clock = std::chrono::steady_clock;

std::string seconds_text(milliseconds ms) {
    char text[32];
    std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(ms.count() / 1000),
                  static_cast<long long>(ms.count() % 1000));
    return text;
}

// Redis goes on serving a blocked BLMOVE of a client that froze (SIGSTOP, a VM pause) or
// was cut off. A block that outlived our heartbeat could move a task into the processing
// list of a worker the dispatcher has already reaped, where nobody would look for it before
// its lease ran out. The last beat is at most one interval old when a block starts, so a
// block shorter than (ttl - interval) ends first; half of that leaves room for delays.
milliseconds longest_block(milliseconds heartbeat_ttl, milliseconds heartbeat_interval) {
    auto block = (heartbeat_ttl - heartbeat_interval) / 2;
    return std::max(block, milliseconds{10});
}

Fetcher::Fetcher(const WorkerOptions& options, const WorkerKeys& keys, HeldTasks& held,
                 WorkerLog& log, const std::atomic<bool>& stop)
    : options_(options),
      keys_(keys),
      held_(held),
      log_(log),
      stop_(stop),
      max_block_(longest_block(options.heartbeat_ttl, options.heartbeat_interval)) {}

std::optional<Task> Fetcher::fetch(Session& s, milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        held_.give_back_orphans(s);
        auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
        std::optional<std::string> message;
        try {
            if (left.count() > 0) {
                auto block = std::min(left, max_block_);
                message = s.blocking_command(blmove(block), block).optional_string();
                if (!message && block < left) {
                    if (stop_.load(std::memory_order_relaxed)) return std::nullopt;
                    continue;  // the next block
                }
            } else {
                message = s.command({"LMOVE", keys_.queue.ready, keys_.processing, "LEFT", "RIGHT"})
                              .optional_string();
            }
        } catch (const redis::IoError&) {
            held_.fetch_reply_lost();  // Redis may have moved a task that we never heard of
            throw;
        }
        if (!message) return std::nullopt;
        if (auto task = take(s, std::move(*message))) return task;
    }
}

std::vector<std::string> Fetcher::blmove(milliseconds timeout) const {
    // LEFT RIGHT: oldest first, and the processing list keeps fetch order.
    return {"BLMOVE", keys_.queue.ready, keys_.processing, "LEFT", "RIGHT", seconds_text(timeout)};
}

bool Fetcher::blocks(int count) const {
    return count == 1 && options_.batch <= 1;
}

void Fetcher::append_fetch(Session& s, int count) const {
    if (blocks(count)) {
        const auto block = std::min(options_.fetch_timeout, max_block_);
        s.append(blmove(block), block);
    } else {
        s.append(protocol::kTakeScript.evalsha({keys_.queue.ready, keys_.processing},
                                               {std::to_string(count)}));
    }
}

std::vector<std::string> Fetcher::read_fetch(Session& s, int count) {
    try {
        auto reply = s.read_reply();
        if (!blocks(count)) return reply.strings();
        if (auto message = reply.optional_string()) return {std::move(*message)};
        return {};
    } catch (const redis::IoError&) {
        held_.fetch_reply_lost();
        throw;
    } catch (const redis::ReplyError& e) {
        if (blocks(count) || !redis::Script::is_noscript(e)) throw;
        // Redis lost its script cache (a restart): eval() loads the script again.
        return s
            .eval(protocol::kTakeScript, {keys_.queue.ready, keys_.processing},
                  {std::to_string(count)})
            .strings();
    }
}

// A message now in our processing list: a task, or set aside as malformed.
std::optional<Task> Fetcher::take(Session& s, std::string message) {
    std::string error;
    if (auto task = protocol::parse_ready(message, error)) {
        held_.hold(message);
        return task;
    }
    set_aside(s, message, error);
    return std::nullopt;
}

std::deque<Task> Fetcher::take_all(Session& s, std::vector<std::string> messages) {
    std::deque<Task> tasks;
    for (auto& message : messages) {
        if (auto task = take(s, std::move(message))) tasks.push_back(std::move(*task));
    }
    return tasks;
}

void Fetcher::set_aside(Session& s, const std::string& message, const std::string& error) {
    // The complete script moves a message between lists atomically: reused for the bad list.
    s.eval(protocol::kCompleteScript, {keys_.processing, keys_.queue.bad}, {message, message});
    bad_messages_.fetch_add(1, std::memory_order_relaxed);
    log_.line("malformed ready message '" + log_text(message) + "' (" + log_text(error) +
              ") moved to " + keys_.queue.bad);
}

}  // namespace rowpump::details
