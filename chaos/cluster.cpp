#include "cluster.hpp"

#include <signal.h>

#include <filesystem>
#include <stdexcept>

#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/rowpump_config.hpp"

namespace rowpump::chaos {

using namespace std::chrono_literals;

std::vector<WorkerSlot> worker_slots() {
    std::vector<WorkerSlot> slots;
    auto add = [&](const std::string& queue, Language language, int threads, int batch) {
        WorkerSlot slot;
        slot.name = queue + "-" + language_name(language) + "-b" + std::to_string(batch);
        slot.queue = queue;
        slot.language = language;
        slot.threads = threads;
        slot.batch = batch;
        slots.push_back(std::move(slot));
    };
    add("once", Language::cpp, 4, 1);
    add("once", Language::cpp, 2, 16);
    add("once", Language::python, 2, 16);
    add("once", Language::node, 4, 1);
    add("periodic", Language::cpp, 2, 16);
    add("periodic", Language::python, 2, 1);
    add("periodic", Language::node, 2, 16);
    add("paced", Language::node, 1, 1);
    add("uuid", Language::python, 2, 1);
    add("uuid", Language::cpp, 1, 16);
    // keyed: more threads than concurrency_per_key, so only the limit keeps a key's handlers
    // from overlapping; no Node.js slot (chaos-worker.js says why)
    add(kKeyedQueue, Language::cpp, 4, 1);
    add(kKeyedQueue, Language::python, 4, 2);
    return slots;
}

std::string language_name(Language language) {
    switch (language) {
        case Language::python:
            return "py";
        case Language::node:
            return "node";
        case Language::cpp:
            break;
    }
    return "cpp";
}

Cluster::Cluster(std::string run_dir, const WorkloadShape& shape)
    : run_dir_(std::move(run_dir)),
      proxy_(std::make_unique<testing::ReplyCutProxy>(redis_.port(), "")),
      database_(mysql_.create_database()) {
    std::filesystem::create_directories(ledger_dir());
    testing::MysqlClient db = this->db();
    create_tables(db);
    testing::ConfigSpec spec = testing::config_for(mysql_, redis_, database_, queue_specs(shape));
    spec.log_level = "info";
    spec.redis_port = proxy_->port();
    for (auto& queue : spec.queues) {
        queue.extra_lines.push_back("leader_timeout: " + std::to_string(kLeaderTimeoutMs) + "ms");
    }
    config_ = testing::write_config(run_dir_ + "/rowpump.yaml", spec);
    testing::migrate_apply(config_);
    workers_ = worker_slots();
}

Cluster::~Cluster() = default;

void Cluster::start_dispatcher() {
    const std::string name = "dispatcher-" + std::to_string(++dispatchers_started_);
    dispatchers_.push_back(
        std::make_unique<testing::Dispatcher>(config_, run_dir_ + "/" + name + ".log"));
    names_[dispatchers_.back()->process().pid()] = name;
}

void Cluster::start_dispatchers() {
    start_dispatcher();
    start_dispatcher();
}

void Cluster::start_worker(WorkerSlot& slot) {
    const std::string id = slot.name + "-" + std::to_string(slot.generation);
    slot.worker_id = id;
    testing::SpawnOptions spawn =
        testing::log_to(run_dir_ + "/worker-" + id + "-" + std::to_string(++slot.starts) + ".out");
    std::vector<std::string> argv;
    switch (slot.language) {
        case Language::cpp:
            argv = {ROWPUMP_CHAOS_WORKER};
            break;
        case Language::python:
            argv = {ROWPUMP_CHAOS_PYTHON3, ROWPUMP_CHAOS_PYTHON_WORKER};
            spawn.env = {{"PYTHONPATH", ROWPUMP_PYTHON_SDK}, {"PYTHONDONTWRITEBYTECODE", "1"}};
            break;
        case Language::node:
            argv = {ROWPUMP_CHAOS_NODE, ROWPUMP_CHAOS_NODE_WORKER};
            break;
    }
    const std::vector<std::string> args{"--redis-port",
                                        std::to_string(redis_.port()),
                                        "--queue",
                                        slot.queue,
                                        "--worker-id",
                                        id,
                                        "--ledger",
                                        ledger_dir() + "/" + id + ".log",
                                        "--threads",
                                        std::to_string(slot.threads),
                                        "--batch",
                                        std::to_string(slot.batch),
                                        "--heartbeat-ttl-ms",
                                        std::to_string(kHeartbeatTtlMs)};
    argv.insert(argv.end(), args.begin(), args.end());
    slot.process = std::make_unique<testing::ChildProcess>(argv, std::move(spawn));
    names_[slot.process->pid()] = "worker " + id;
}

void Cluster::start_workers() {
    for (auto& slot : workers_) {
        ++slot.generation;
        start_worker(slot);
    }
}

void Cluster::stop_workers() {
    for (auto& slot : workers_) {
        if (slot.process) slot.process->signal(SIGTERM);
    }
    for (auto& slot : workers_) {
        if (slot.process) slot.process->stop(30s);
    }
}

void Cluster::stop_dispatchers() {
    for (auto& d : dispatchers_) d->signal(SIGTERM);
    for (auto& d : dispatchers_) d->process().stop(10s);
}

pid_t Cluster::replace_worker(WorkerSlot& slot, bool same_id) {
    const pid_t dead = slot.process->pid();
    slot.process->kill();
    if (!same_id) ++slot.generation;
    start_worker(slot);
    return dead;
}

std::optional<pid_t> Cluster::leader_pid() {
    // The lock holds "<host>:<pid>:<random>".
    const auto value =
        redis_.connect().command({"GET", protocol::keys_for("once").leader}).optional_string();
    if (!value) return std::nullopt;
    const auto first = value->find(':');
    const auto second = value->find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) return std::nullopt;
    return static_cast<pid_t>(std::stol(value->substr(first + 1, second - first - 1)));
}

testing::Dispatcher* Cluster::leader() {
    testing::Dispatcher* found = nullptr;
    testing::eventually(15s, [&] {
        try {
            const auto pid = leader_pid();
            for (auto& d : dispatchers_) {
                if (pid && d->process().pid() == *pid && d->running()) found = d.get();
            }
        } catch (const std::exception&) {
            // Redis is coming back: ask again.
        }
        return found != nullptr;
    });
    return found;
}

testing::Dispatcher* Cluster::standby() {
    testing::Dispatcher* lead = leader();
    for (auto& d : dispatchers_) {
        if (d.get() != lead && d->running()) return d.get();
    }
    return nullptr;
}

pid_t Cluster::replace_dispatcher(testing::Dispatcher* d) {
    const pid_t dead = d->process().pid();
    d->process().kill();
    for (auto it = dispatchers_.begin(); it != dispatchers_.end(); ++it) {
        if (it->get() == d) {
            dispatchers_.erase(it);
            break;
        }
    }
    start_dispatcher();
    return dead;
}

}  // namespace rowpump::chaos
