#include "rowpump/worker.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "heartbeat.hpp"
#include "options.hpp"
#include "rowpump/common/protocol.hpp"
#include "session.hpp"

namespace rowpump {

namespace {

using Clock = std::chrono::steady_clock;
using details::Backoff;
using details::Script;
using details::Session;

// rp_last_error holds 1024 bytes; a longer reason would only be cut by the database.
constexpr std::size_t kMaxReasonBytes = 1000;
constexpr milliseconds kQueuePoll{200};

// After a clean stop the heartbeat goes at once. The worker leaves the workers set only
// with nothing left in hand; otherwise it stays listed, so the dispatcher (seeing no
// heartbeat) takes the leftovers back right away. Returns how many were left.
const char* const kLeaveScript = R"lua(
redis.call('DEL', KEYS[1])
local left = redis.call('LLEN', KEYS[2])
if left == 0 then
  redis.call('SREM', KEYS[3], ARGV[1])
end
return left
)lua";

static_assert(std::atomic<bool>::is_always_lock_free, "stop() must be async-signal-safe");

// BLMOVE takes its timeout in seconds: "1.500".
std::string seconds_text(milliseconds ms) {
    char text[32];
    std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(ms.count() / 1000),
                  static_cast<long long>(ms.count() % 1000));
    return text;
}

std::string truncated(std::string text, std::size_t max) {
    if (text.size() <= max) return text;
    std::size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
    text.resize(cut);
    return text;
}

std::vector<std::string> split_names(const std::string& csv) {
    std::vector<std::string> names;
    std::size_t start = 0;
    while (start <= csv.size()) {
        auto end = std::min(csv.find(',', start), csv.size());
        auto name = csv.substr(start, end - start);
        name.erase(0, name.find_first_not_of(' '));
        name.erase(name.find_last_not_of(' ') + 1);
        if (!name.empty()) names.push_back(name);
        start = end + 1;
    }
    return names;
}

std::string joined(const std::vector<std::string>& names) {
    if (names.empty()) return "none";
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
    return out;
}

// A Task built by hand (not by fetch) has no message: rebuild it.
std::string ready_message(const Task& task) {
    return task.message.empty() ? protocol::format_ready(task.id, task.token) : task.message;
}

void sleep_unless(milliseconds duration, const std::atomic<bool>& stop) {
    const auto until = Clock::now() + duration;
    while (!stop.load(std::memory_order_relaxed) && Clock::now() < until) {
        std::this_thread::sleep_for(std::min(milliseconds{50}, duration));
    }
}

// A task whose handler has run, with the done message to send for it.
struct Report {
    Task task;
    std::string done;
};

std::vector<std::string> report_args(const std::vector<Report>& reports) {
    std::vector<std::string> args;
    args.reserve(2 * reports.size());
    for (const auto& r : reports) {
        args.push_back(ready_message(r.task));
        args.push_back(r.done);
    }
    return args;
}

// "task '42'", or "3 tasks ('42', ...)" for log lines.
std::string tasks_text(const std::vector<Report>& reports) {
    const std::string first = "'" + reports.front().task.id + "'";
    if (reports.size() == 1) return "task " + first;
    return std::to_string(reports.size()) + " tasks (" + first + ", ...)";
}

}  // namespace

struct Worker::Impl {
    explicit Impl(WorkerOptions raw);

    // Before the first fetch: the queue is announced, scripts loaded, the heartbeat beating.
    // With survive_outages, waits out Redis outages and returns false if stop() came first;
    // without, throws ConnectionError.
    bool start(bool survive_outages);
    bool wait_for_queue(Session& s, Clock::time_point deadline, bool stoppable);
    void beat(Session& s);
    void finish() noexcept;

    std::optional<Task> fetch_on(Session& s, milliseconds timeout);
    std::optional<Task> take(Session& s, std::string message);
    std::deque<Task> take_all(Session& s, std::vector<std::string> messages);
    void set_aside(Session& s, const std::string& message, const std::string& error);
    std::string value_problem(const Outcome& outcome) const;
    std::string done_message(const Task& task, const Outcome& outcome) const;
    std::int64_t report_on(Session& s, const std::vector<Report>& reports);

    void serve(const Handler& handler);
    std::string outcome_message(const Handler& handler, const Task& task);
    std::deque<Task> report_and_fetch(Session& s, const std::vector<Report>& reports);
    void append_fetch(Session& s) const;
    std::vector<std::string> fetched_messages(const redis::Reply& reply) const;
    void report_until_done(Session& s, const std::vector<Report>& reports, bool maybe_sent);
    void report_accepted(const std::vector<Report>& reports, std::int64_t accepted, bool maybe_sent);
    std::vector<std::string> blmove(milliseconds timeout) const;

    template <class F>
    auto pooled(F&& f);
    void log(const std::string& line) const noexcept;
    void redis_failed(const std::exception& e);
    void redis_ok();
    void set_declared(const std::string& csv);
    Session new_session() const { return Session(redis_options); }

    const WorkerOptions options;
    const redis::Options redis_options;
    const protocol::Keys keys;
    const std::string processing;
    const std::string heartbeat_key;
    const milliseconds max_block;

    std::atomic<bool> stop_requested{false};
    std::atomic<std::uint64_t> bad_messages{0};
    std::atomic<bool> redis_down{false};

    mutable std::mutex values_mutex;
    std::vector<std::string> declared;  // the names the queue's on_success takes

    std::mutex start_mutex;
    std::atomic<bool> started{false};
    Script complete_script{protocol::kCompleteScript, {}};
    Script take_script{protocol::kTakeScript, {}};
    std::unique_ptr<details::Heartbeat> heartbeat;

    std::mutex pool_mutex;
    std::vector<Session> pool;  // connections for the lower-level calls
};

namespace {

// Redis goes on serving a blocked BLMOVE of a client that froze (SIGSTOP, a VM pause) or
// was cut off. A block that outlived our heartbeat could move a task into the processing
// list of a worker the dispatcher has already reaped, where nobody would look for it before
// its lease ran out. The last beat is at most one interval old when a block starts, so a
// block shorter than (ttl - interval) ends first; half of that leaves room for delays.
milliseconds longest_block(const WorkerOptions& o) {
    auto block = (o.heartbeat_ttl - o.heartbeat_interval) / 2;
    return std::max(block, milliseconds{10});
}

redis::Options redis_options_for(const WorkerOptions& o) {
    redis::Options r;
    r.host = o.redis.host;
    r.port = o.redis.port;
    r.user = o.redis.user;
    r.password = o.redis.password;
    r.connect_timeout = o.redis.connect_timeout;
    return r;
}

}  // namespace

Worker::Impl::Impl(WorkerOptions raw)
    : options(details::validated(std::move(raw))),
      redis_options(redis_options_for(options)),
      keys(protocol::keys_for(options.queue)),
      processing(keys.processing(options.worker_id)),
      heartbeat_key(keys.heartbeat(options.worker_id)),
      max_block(longest_block(options)) {}

// ---- starting and leaving ----

bool Worker::Impl::start(bool survive_outages) {
    if (started.load(std::memory_order_acquire)) return true;
    std::lock_guard<std::mutex> lock(start_mutex);
    if (started.load(std::memory_order_relaxed)) return true;
    const auto deadline = Clock::now() + options.queue_wait;
    Session s = new_session();
    Backoff backoff;
    for (;;) {
        try {
            if (!wait_for_queue(s, deadline, survive_outages)) return false;
            complete_script.sha = s.command({"SCRIPT", "LOAD", complete_script.body}).string();
            take_script.sha = s.command({"SCRIPT", "LOAD", take_script.body}).string();
            // The first beat precedes the first BLMOVE, so the dispatcher never sees tasks
            // in our processing list without a heartbeat.
            beat(s);
            break;
        } catch (const redis::IoError& e) {
            if (!survive_outages) throw ConnectionError(e.what());
            redis_failed(e);
        } catch (const redis::ReplyError& e) {
            // At start-up an error reply is a configuration problem (wrong password, a key
            // of the wrong type), except while Redis loads its data after a restart.
            if (!survive_outages || std::string_view(e.what()).rfind("LOADING", 0) != 0) {
                throw Error(std::string("redis ") + options.redis.host + ":" +
                            std::to_string(options.redis.port) + ": " + e.what());
            }
            redis_failed(e);
        }
        sleep_unless(backoff.next(), stop_requested);
        if (stop_requested.load()) return false;
    }
    heartbeat = std::make_unique<details::Heartbeat>(
        new_session(), options.heartbeat_interval, [this](Session& hs) { beat(hs); },
        [this](const std::exception& e) { redis_failed(e); });
    started.store(true, std::memory_order_release);
    return true;
}

bool Worker::Impl::wait_for_queue(Session& s, Clock::time_point deadline, bool stoppable) {
    for (;;) {
        auto replies = s.pipeline({{"EXISTS", keys.meta}, {"HGET", keys.meta, "values"}});
        if (replies[0].integer() == 1) {
            set_declared(replies[1].optional_string().value_or(""));
            return true;
        }
        auto now = Clock::now();
        if (now >= deadline) {
            throw Error("unknown queue '" + options.queue +
                        "': no dispatcher has announced it (key " + keys.meta + " is missing)");
        }
        if (stoppable && stop_requested.load()) return false;
        std::this_thread::sleep_for(std::min<Clock::duration>(kQueuePoll, deadline - now));
    }
}

void Worker::Impl::beat(Session& s) {
    // SET before SADD: a listed worker without a heartbeat is one the dispatcher reaps.
    auto replies = s.pipeline({{"SET", heartbeat_key, options.worker_id, "PX",
                                std::to_string(options.heartbeat_ttl.count())},
                               {"SADD", keys.workers, options.worker_id},
                               {"HGET", keys.meta, "values"}});
    // The dispatcher may be restarted with another on_success: follow it.
    if (auto values = replies[2].optional_string()) set_declared(*values);
    redis_ok();
}

void Worker::Impl::finish() noexcept {
    std::lock_guard<std::mutex> lock(start_mutex);
    if (!started.load()) return;
    heartbeat.reset();  // first, so no beat can list us again after we leave
    started.store(false);
    Session s = new_session();
    Backoff backoff;
    for (int attempt = 1;; ++attempt) {
        try {
            auto left = s.eval(Script{kLeaveScript, {}}, {heartbeat_key, processing, keys.workers},
                               {options.worker_id})
                            .integer();
            if (left > 0) {
                log(std::to_string(left) + " task(s) left in " + processing +
                    "; the dispatcher takes them back");
            }
            return;
        } catch (const std::exception& e) {
            if (attempt == 3) {
                log(std::string("could not sign off (") + e.what() +
                    "); the heartbeat lapses on its own");
                return;
            }
        }
        std::this_thread::sleep_for(backoff.next());
    }
}

// ---- tasks ----

std::optional<Task> Worker::Impl::fetch_on(Session& s, milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
        std::optional<std::string> message;
        if (left.count() > 0) {
            auto block = std::min(left, max_block);
            message = s.blocking_command(blmove(block), block).optional_string();
            if (!message && block < left) {
                if (stop_requested.load(std::memory_order_relaxed)) return std::nullopt;
                continue;  // the next block
            }
        } else {
            message =
                s.command({"LMOVE", keys.ready, processing, "LEFT", "RIGHT"}).optional_string();
        }
        if (!message) return std::nullopt;
        if (auto task = take(s, std::move(*message))) return task;
    }
}

std::vector<std::string> Worker::Impl::blmove(milliseconds timeout) const {
    // LEFT RIGHT: oldest first, and the processing list keeps fetch order.
    return {"BLMOVE", keys.ready, processing, "LEFT", "RIGHT", seconds_text(timeout)};
}

// A message now in our processing list: a task, or set aside as malformed.
std::optional<Task> Worker::Impl::take(Session& s, std::string message) {
    std::string error;
    if (auto parsed = protocol::parse_ready(message, error)) {
        return Task{std::move(parsed->id), std::move(parsed->token), parsed->attempt,
                    std::move(message)};
    }
    set_aside(s, message, error);
    return std::nullopt;
}

std::deque<Task> Worker::Impl::take_all(Session& s, std::vector<std::string> messages) {
    std::deque<Task> tasks;
    for (auto& message : messages) {
        if (auto task = take(s, std::move(message))) tasks.push_back(std::move(*task));
    }
    return tasks;
}

void Worker::Impl::set_aside(Session& s, const std::string& message, const std::string& error) {
    // The complete script moves a message between lists atomically: reused for the bad list.
    s.eval(complete_script, {processing, keys.bad}, {message, message});
    bad_messages.fetch_add(1, std::memory_order_relaxed);
    log("malformed ready message '" + truncated(message, 200) + "' (" + error + ") moved to " +
        keys.bad);
}

std::string Worker::Impl::value_problem(const Outcome& outcome) const {
    if (outcome.kind() != Outcome::Kind::success) return "";
    std::lock_guard<std::mutex> lock(values_mutex);
    for (const auto& [name, value] : outcome.values()) {
        if (std::find(declared.begin(), declared.end(), name) == declared.end()) {
            return "value '" + name + "' is not declared by queue '" + options.queue +
                   "' (its on_success takes: " + joined(declared) + ")";
        }
    }
    for (const auto& name : declared) {
        if (outcome.values().count(name) == 0) {
            return "value '" + name + "' is missing: queue '" + options.queue +
                   "' needs it for on_success (takes: " + joined(declared) + ")";
        }
    }
    return "";
}

std::string Worker::Impl::done_message(const Task& task, const Outcome& outcome) const {
    protocol::Done done;
    done.ready = ready_message(task);
    switch (outcome.kind()) {
        case Outcome::Kind::success:
            done.verb = protocol::Verb::ok;
            done.values.assign(outcome.values().begin(), outcome.values().end());
            break;
        case Outcome::Kind::retry:
            done.verb = protocol::Verb::retry;
            done.reason = truncated(outcome.reason(), kMaxReasonBytes);
            if (outcome.delay()) done.delay = std::max(*outcome.delay(), milliseconds{0});
            break;
        case Outcome::Kind::fail:
            done.verb = protocol::Verb::fail;
            done.reason = truncated(outcome.reason(), kMaxReasonBytes);
            break;
    }
    auto text = protocol::format_done(done);
    if (text.size() > protocol::kMaxMessageBytes) {
        throw Error("the outcome of task '" + task.id + "' is " + std::to_string(text.size()) +
                    " bytes long once encoded; at most " +
                    std::to_string(protocol::kMaxMessageBytes) + " fit in a done message");
    }
    return text;
}

// How many of the reports were accepted (the others' tasks had been taken back).
std::int64_t Worker::Impl::report_on(Session& s, const std::vector<Report>& reports) {
    return s.eval(complete_script, {processing, keys.done}, report_args(reports)).integer();
}

// ---- run() ----

void Worker::Impl::serve(const Handler& handler) {
    Session s = new_session();
    Backoff backoff;
    std::deque<Task> hand;        // taken, waiting for the handler
    std::vector<Report> reports;  // handled, waiting to be reported
    for (;;) {
        if (!hand.empty()) {
            Task task = std::move(hand.front());
            hand.pop_front();
            auto done = outcome_message(handler, task);
            reports.push_back({std::move(task), std::move(done)});
            if (hand.empty()) hand = report_and_fetch(s, std::exchange(reports, {}));
            continue;
        }
        if (stop_requested.load(std::memory_order_relaxed)) return;
        try {
            if (auto task = fetch_on(s, options.fetch_timeout)) hand.push_back(std::move(*task));
            backoff.reset();
            redis_ok();
            continue;
        } catch (const redis::IoError& e) {
            redis_failed(e);
        } catch (const redis::ReplyError& e) {
            redis_failed(e);
        }
        sleep_unless(backoff.next(), stop_requested);
    }
}

// Runs the handler; returns the done message to send.
std::string Worker::Impl::outcome_message(const Handler& handler, const Task& task) {
    Outcome outcome;
    try {
        outcome = handler(task);
    } catch (const std::exception& e) {
        outcome = Outcome::retry(e.what());
    } catch (...) {
        outcome = Outcome::retry("the handler threw an exception that is not a std::exception");
    }
    // A bad outcome becomes a retry naming the problem: the row is not lost, and once its
    // attempts run out `rowpump dead` shows why.
    auto problem = value_problem(outcome);
    if (problem.empty()) {
        try {
            return done_message(task, outcome);
        } catch (const Error& e) {
            problem = e.what();
        }
    }
    return done_message(task, Outcome::retry(problem));
}

// The reports and the next fetch share one round trip: on a busy queue a batch of tasks costs
// one.
std::deque<Task> Worker::Impl::report_and_fetch(Session& s, const std::vector<Report>& reports) {
    if (stop_requested.load(std::memory_order_relaxed)) {
        report_until_done(s, reports, false);
        return {};
    }
    bool reported = false;
    std::vector<std::string> next;
    try {
        s.append(Session::script_call("EVALSHA", complete_script.sha, {processing, keys.done},
                                      report_args(reports)));
        append_fetch(s);
        try {
            report_accepted(reports, s.read_reply().integer(), false);
            reported = true;
        } catch (const redis::ReplyError&) {
            // NOSCRIPT after a Redis restart, or worse: retried below, after the fetch reply.
        }
        try {
            next = fetched_messages(s.read_reply());
        } catch (const redis::ReplyError& e) {
            if (options.batch == 1 || std::string_view(e.what()).rfind("NOSCRIPT", 0) != 0) throw;
            // Redis lost its script cache (a restart): eval() loads the script again.
            next = s.eval(take_script, {keys.ready, processing}, {std::to_string(options.batch)})
                       .strings();
        }
        redis_ok();
    } catch (const redis::IoError& e) {
        redis_failed(e);
        if (!reported) report_until_done(s, reports, true);
        return {};
    } catch (const redis::ReplyError& e) {
        redis_failed(e);  // the fetch failed; the next one (a plain BLMOVE) waits for Redis
    }
    if (!reported) report_until_done(s, reports, false);
    try {
        return take_all(s, std::move(next));
    } catch (const redis::IoError& e) {
        redis_failed(e);
    } catch (const redis::ReplyError& e) {
        redis_failed(e);
    }
    return {};
}

// batch 1: a BLMOVE, so an idle worker waits in Redis; above: the take script, which does
// not block (an empty answer sends the thread to fetch_on, which does).
void Worker::Impl::append_fetch(Session& s) const {
    if (options.batch == 1) {
        const auto block = std::min(options.fetch_timeout, max_block);
        s.append(blmove(block), block);
    } else {
        s.append(Session::script_call("EVALSHA", take_script.sha, {keys.ready, processing},
                                      {std::to_string(options.batch)}));
    }
}

std::vector<std::string> Worker::Impl::fetched_messages(const redis::Reply& reply) const {
    if (options.batch > 1) return reply.strings();
    if (auto message = reply.optional_string()) return {std::move(*message)};
    return {};
}

void Worker::Impl::report_accepted(const std::vector<Report>& reports, std::int64_t accepted,
                                   bool maybe_sent) {
    // After a broken connection a refusal may only mean that the first attempt got through.
    const auto refused = static_cast<std::int64_t>(reports.size()) - accepted;
    if (refused == 0 || maybe_sent) return;
    if (reports.size() == 1) {
        log("the report on " + tasks_text(reports) +
            " came too late: the task had been taken back from this worker");
    } else {
        log("the reports on " + std::to_string(refused) + " of " + tasks_text(reports) +
            " came too late: the tasks had been taken back from this worker");
    }
}

void Worker::Impl::report_until_done(Session& s, const std::vector<Report>& reports,
                                     bool maybe_sent) {
    Backoff backoff;
    std::optional<Clock::time_point> failing_since;
    auto failed = [&](const std::exception& e) {
        redis_failed(e);
        auto now = Clock::now();
        if (!failing_since) {
            failing_since = now;
            log("report on " + tasks_text(reports) + " failed (" + e.what() + "); retrying");
        }
        // Past the heartbeat TTL the dispatcher takes the tasks back anyway.
        return stop_requested.load() && now - *failing_since >= options.heartbeat_ttl;
    };
    for (;;) {
        try {
            report_accepted(reports, report_on(s, reports), maybe_sent || failing_since);
            redis_ok();
            return;
        } catch (const redis::IoError& e) {
            if (failed(e)) break;
        } catch (const redis::ReplyError& e) {
            if (failed(e)) break;
        }
        std::this_thread::sleep_for(backoff.next());
    }
    log("gave up reporting on " + tasks_text(reports) + "; they stay in " + processing +
        " until the dispatcher takes them back");
}

// ---- helpers ----

template <class F>
auto Worker::Impl::pooled(F&& f) {
    Session s = [&] {
        std::lock_guard<std::mutex> lock(pool_mutex);
        if (pool.empty()) return new_session();
        Session back = std::move(pool.back());
        pool.pop_back();
        return back;
    }();
    auto give_back = [&] {
        std::lock_guard<std::mutex> lock(pool_mutex);
        pool.push_back(std::move(s));
    };
    try {
        auto result = f(s);
        give_back();
        return result;
    } catch (const redis::IoError& e) {
        give_back();  // reconnects on its next use
        throw ConnectionError(e.what());
    } catch (const redis::ReplyError& e) {
        give_back();
        throw Error(std::string("redis: ") + e.what());
    }
}

void Worker::Impl::log(const std::string& line) const noexcept {
    try {
        if (options.log) {
            options.log(line);
        } else {
            std::string text = "rowpump worker " + options.worker_id + ": " + line + "\n";
            std::fputs(text.c_str(), stderr);
        }
    } catch (...) {
        // A failing logger must not take the worker down.
    }
}

void Worker::Impl::redis_failed(const std::exception& e) {
    if (!redis_down.exchange(true)) {
        log(std::string("redis unavailable (") + e.what() + "); retrying");
    }
}

void Worker::Impl::redis_ok() {
    if (redis_down.load(std::memory_order_relaxed) && redis_down.exchange(false)) {
        log("redis reachable again");
    }
}

void Worker::Impl::set_declared(const std::string& csv) {
    auto names = split_names(csv);
    std::lock_guard<std::mutex> lock(values_mutex);
    declared = std::move(names);
}

// ---- the public API ----

Worker::Worker(WorkerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Worker::~Worker() {
    impl_->finish();
}

void Worker::run(const Handler& handler) {
    if (!handler) throw Error("run: the handler is empty");
    if (!impl_->start(true)) return;
    std::mutex error_mutex;
    std::exception_ptr error;
    auto serve = [&] {
        try {
            impl_->serve(handler);
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
            impl_->stop_requested.store(true);
        }
    };
    std::vector<std::thread> threads;
    try {
        for (int i = 0; i < impl_->options.threads; ++i) threads.emplace_back(serve);
    } catch (...) {
        impl_->stop_requested.store(true);
        for (auto& t : threads) t.join();
        impl_->finish();
        throw;
    }
    for (auto& t : threads) t.join();
    impl_->finish();
    if (error) std::rethrow_exception(error);
}

void Worker::stop() noexcept {
    impl_->stop_requested.store(true, std::memory_order_relaxed);
}

bool Worker::stopping() const noexcept {
    return impl_->stop_requested.load(std::memory_order_relaxed);
}

std::optional<Task> Worker::fetch(milliseconds timeout) {
    impl_->start(false);
    return impl_->pooled([&](Session& s) { return impl_->fetch_on(s, timeout); });
}

bool Worker::complete(const Task& task, const Outcome& outcome) {
    impl_->start(false);
    auto problem = impl_->value_problem(outcome);
    if (!problem.empty()) throw Error(problem);
    const std::vector<Report> reports{{task, impl_->done_message(task, outcome)}};
    return impl_->pooled([&](Session& s) { return impl_->report_on(s, reports) == 1; });
}

void Worker::extend(const Task& task, milliseconds lease) {
    if (lease.count() <= 0) throw Error("extend: the lease must be positive");
    impl_->start(false);
    protocol::Done done;
    done.ready = ready_message(task);
    done.verb = protocol::Verb::extend;
    done.lease = lease;
    auto text = protocol::format_done(done);
    impl_->pooled([&](Session& s) {
        return s.command({"RPUSH", impl_->keys.done, text}).integer();
    });
}

const std::string& Worker::worker_id() const {
    return impl_->options.worker_id;
}

std::uint64_t Worker::bad_messages() const noexcept {
    return impl_->bad_messages.load(std::memory_order_relaxed);
}

}  // namespace rowpump
