#pragma once

// The rowpump worker SDK: take tasks from a queue's ready list, run a handler, report the
// outcome. See docs/workers.md ("Writing a worker") and examples/.
//
//   rowpump::WorkerOptions options;
//   options.queue = "user_block_check";
//   options.threads = 8;
//   rowpump::Worker worker(options);
//   worker.run([](const rowpump::Task& task) {
//       return rowpump::Outcome::success({{"status", "1"}});
//   });

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "rowpump/redis_address.hpp"
#include "rowpump/task.hpp"
#include "rowpump/verb.hpp"

namespace rowpump {

using std::chrono::milliseconds;

// A fatal error: bad options, unknown queue, a Redis reply that makes no sense.
class Error : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Redis could not be reached or failed a command, thrown by the lower-level calls (fetch,
// complete, extend) only; the next call reconnects. run() never throws it: it waits and retries.
class ConnectionError : public Error {
    using Error::Error;
};

struct WorkerOptions {
    RedisAddress redis;
    std::string queue;                   // required; must match a queue in the dispatcher's config
    int threads = 1;                     // concurrent handler threads in run()
    milliseconds heartbeat_ttl{10000};   // the dispatcher takes tasks back this long after we die
    milliseconds heartbeat_interval{0};  // 0: heartbeat_ttl / 3
    milliseconds fetch_timeout{1000};    // longest block in one fetch inside run()
    // Tasks a run() thread takes per Redis round trip. 0 (the default): adaptive. A thread
    // starts with one and takes more at once (up to 16) while the ready list has them waiting
    // and its handlers are fast: as many as, handled one after another, take no longer than
    // one round trip to Redis. A handler as slow as a round trip brings it back to one at once,
    // so a task waits in one thread's hand at most about one round trip while another thread
    // or worker may be free. 1 to 1000: exactly that many (1: one task per round trip, the
    // worker blocking in Redis for it).
    int batch = 0;
    milliseconds queue_wait{30000};  // how long to wait for the dispatcher to announce the queue
    // Empty: <hostname>-<pid>-<random>. One process at a time per worker id: each process
    // (a child after fork() too) serves as an incarnation of its own; a restart under the same
    // id waits for the earlier process's heartbeat to lapse and gives back what it held, and
    // a second live process under the id is refused (docs/protocol.md).
    std::string worker_id;
    // The handler's deadline in run(); 0: none. A task's own "timeout_ms" field, when its
    // ready message has one, overrides it. Past the deadline the task is reported as a retry
    // with reason "timeout", Task::cancelled() turns true and the thread takes the next task;
    // the handler goes on in the background until it returns, its outcome discarded. With a
    // deadline, handlers run on a thread of their own, and one that ignores cancellation must
    // use nothing that ends when run() returns.
    milliseconds timeout{0};
    // Receives one line for each problem the worker survives (Redis unavailable, a malformed
    // message set aside, a report that came too late). Empty: the line goes to stderr.
    std::function<void(const std::string&)> log;
};

class Outcome {
public:
    // success, retry or fail; never extend (Worker::extend reports that).
    using Kind = Verb;

    // Done. `values` fill the queue's on_success placeholders (":status" <- {"status", "1"});
    // only names the queue declares are accepted.
    static Outcome success(std::map<std::string, std::string> values = {});
    // Try again later: after `delay` if given, else after the queue's backoff.
    static Outcome retry(std::string reason, std::optional<milliseconds> delay = std::nullopt);
    // Give up: the row is dead, listed by `rowpump dead`, revived by `rowpump retry`.
    static Outcome fail(std::string reason);

    Kind kind() const { return kind_; }
    const std::map<std::string, std::string>& values() const { return values_; }
    const std::string& reason() const { return reason_; }
    std::optional<milliseconds> delay() const { return delay_; }

private:
    Kind kind_ = Kind::success;
    std::map<std::string, std::string> values_;
    std::string reason_;
    std::optional<milliseconds> delay_;
};

// A handler may also throw: an exception counts as Outcome::retry(e.what()).
using Handler = std::function<Outcome(const Task&)>;

// The SDK's version as built (project(VERSION) in CMakeLists.txt, e.g. "0.3.0"), and the
// protocol version it speaks with a dispatcher (docs/protocol.md, "Protocol version").
const char* version() noexcept;
int protocol_version() noexcept;

class Worker {
public:
    // Validates options (throws Error); connects lazily.
    explicit Worker(WorkerOptions options);
    ~Worker();
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    // Runs `handler` on options.threads threads until stop(), then drains: no new fetches,
    // tasks in hand finish and are reported. Survives Redis outages (waits and reconnects).
    // Throws Error if the queue is unknown, or if its dispatcher speaks another protocol
    // version (docs/protocol.md, "Protocol version"), or if another live process holds worker_id:
    // then nothing is taken. Also throws Error, after draining, when another process took
    // worker_id over while this one's heartbeat had lapsed.
    void run(const Handler& handler);

    // Asks run() to drain and return. Safe from any thread; only stores to an atomic flag,
    // so it may be called from a signal handler.
    void stop() noexcept;
    bool stopping() const noexcept;

    // Lower level: for callers who run their own loop. fetch/complete/extend are safe to call
    // from several threads at once. A heartbeat runs from the first fetch until the
    // Worker is destroyed.
    // Waits up to `timeout` for a task (in Redis blocks kept shorter than the heartbeat TTL,
    // so a frozen process takes no task after the dispatcher gave up on it); returns early,
    // empty, once stop() was called.
    std::optional<Task> fetch(milliseconds timeout);
    // Reports the outcome; returns false if the task had been taken back from this worker
    // (its heartbeat lapsed) and the outcome was discarded. Throws Error when a success
    // names a value the queue does not declare, or leaves out one its on_success uses.
    bool complete(const Task& task, const Outcome& outcome);
    // Keeps the claim for `lease` from now, for tasks that run longer than the queue's lease.
    void extend(const Task& task, milliseconds lease);

    const std::string& worker_id() const;
    // Malformed ready messages found by fetch and moved to the queue's bad list.
    std::uint64_t bad_messages() const noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace rowpump
