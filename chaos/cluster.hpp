#pragma once

// Everything the chaos run starts: MariaDB and Redis of its own, two `rowpump run` processes
// on one config (a leader and a stand-by) that reach Redis through a proxy (which the
// push_reply_cut fault arms), and the worker processes, by slot, in three languages. Start, stop
// and signal them from the main thread only (ChildProcess ties its children to that thread).

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rowpump/testing/reply_cut_proxy.hpp"
#include "rowpump/testing/rowpump_cli.hpp"
#include "rowpump/testing/servers.hpp"
#include "workload.hpp"

namespace rowpump::chaos {

// The chaos workers' languages, each with its own program writing the same ledger.
enum class Language { cpp, python, node };
std::string language_name(Language language);

// One kind of worker process: which queue, which language, how many threads, how many tasks
// per round trip. A killed worker is replaced by a new process with a new worker id in the
// same slot (restart_worker: with the same id).
struct WorkerSlot {
    std::string name;  // e.g. "once-py-b16"
    std::string queue;
    Language language = Language::cpp;
    int threads = 1;
    int batch = 1;
    int generation = 0;
    int starts = 0;
    std::string worker_id;  // the running process's
    std::unique_ptr<testing::ChildProcess> process;
};

// The fleet: slots of every queue in the three languages.
std::vector<WorkerSlot> worker_slots();

class Cluster {
public:
    static constexpr int kHeartbeatTtlMs = 3000;
    static constexpr int kLeaderTimeoutMs = 3000;

    // Starts the servers, creates the tables, writes and migrates the config; starts nothing
    // else yet.
    Cluster(std::string run_dir, const WorkloadShape& shape);
    ~Cluster();

    void start_dispatchers();
    void start_workers();
    void stop_workers();      // SIGTERM: they finish what they hold
    void stop_dispatchers();  // SIGTERM

    const std::string& run_dir() const { return run_dir_; }
    std::string ledger_dir() const { return run_dir_ + "/ledger"; }
    testing::MariaDb& mysql() { return mysql_; }
    testing::RedisServer& redis() { return redis_; }
    testing::MysqlLogin login() const { return mysql_.login(database_); }
    testing::MysqlClient db() const { return mysql_.connect(database_); }
    const std::string& config() const { return config_; }

    std::vector<WorkerSlot>& workers() { return workers_; }
    // Kills the slot's process with SIGKILL and starts its successor, under a new worker id
    // or (same_id) the dead one's; returns the dead pid.
    pid_t replace_worker(WorkerSlot& slot, bool same_id = false);
    // The proxy between the dispatchers and Redis.
    testing::ReplyCutProxy& proxy() { return *proxy_; }

    // The dispatcher holding the leader lock of the `once` queue, waited for up to 15 s
    // (after a takeover or a Redis restart nobody may hold it for a moment); nullptr if none.
    testing::Dispatcher* leader();
    testing::Dispatcher* standby();  // any running dispatcher that is not leader()
    // Kills `d` with SIGKILL and starts a new dispatcher in its place; returns the dead pid.
    pid_t replace_dispatcher(testing::Dispatcher* d);

    // Every process the run started, by pid: "dispatcher-2", "worker once-b16-3", ...
    const std::map<pid_t, std::string>& names() const { return names_; }

private:
    void start_worker(WorkerSlot& slot);
    void start_dispatcher();
    std::optional<pid_t> leader_pid();

    std::string run_dir_;
    testing::MariaDb mysql_;
    testing::RedisServer redis_;
    std::unique_ptr<testing::ReplyCutProxy> proxy_;
    std::string database_;
    std::string config_;
    std::vector<std::unique_ptr<testing::Dispatcher>> dispatchers_;
    int dispatchers_started_ = 0;
    std::vector<WorkerSlot> workers_;
    std::map<pid_t, std::string> names_;
};

}  // namespace rowpump::chaos
