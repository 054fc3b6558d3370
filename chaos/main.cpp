// rowpump_chaos: a workload of N tasks on five queues (one-shot, periodic, rate-limited, UUID
// keys, grouped by key with a per-key limit), SDK workers with batch 1 and 16, two dispatchers
// (leader and stand-by), and a seeded fault schedule played against all of it; then a verdict
// on the data. See docs/chaos.md.
//
// Exit 0 only if no row lost an outcome or had one applied twice, every extra handler run is
// explained by a fault of the schedule, the rate and the per-key limits held, and every
// fault's own check passed.

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <future>
#include <random>
#include <thread>

#include "cluster.hpp"
#include "faults.hpp"
#include "key_limits.hpp"
#include "key_rate_watch.hpp"
#include "ledger.hpp"
#include "rate_watch.hpp"
#include "recovery.hpp"
#include "report.hpp"
#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/testing/bench_options.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/temp_dir.hpp"
#include "schedule.hpp"
#include "verdict.hpp"

namespace rowpump::chaos {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Options {
    std::int64_t tasks = 50000;
    std::uint64_t seed = 0;
    int seconds = 0;  // 0: from the task count
    int drain_timeout = 120;
    std::string claim = "mysql";
    std::string run_dir;
    std::vector<std::string> without;
    int judge_concurrency_per_key = kKeyedConcurrency;
    int judge_rate_per_key = 0;  // 0: the one configured
};

Options parse_options(int argc, char** argv) {
    Options o;
    CLI::App app{"rowpump chaos run: a workload under a seeded fault schedule"};
    app.add_option("--tasks", o.tasks, "applied outcomes the workload needs in all")
        ->check(CLI::Range(std::int64_t{1000}, std::int64_t{100000000}));
    app.add_option("--seed", o.seed, "the fault schedule's seed (default: a random one)");
    app.add_option("--seconds", o.seconds,
                   "how long rows are inserted and faults played (default: tasks / 3000, "
                   "at least 80; never shorter than one round of every fault)")
        ->check(CLI::PositiveNumber);
    app.add_option("--drain-timeout", o.drain_timeout,
                   "seconds to wait for the work to finish after the last insert")
        ->check(CLI::PositiveNumber);
    app.add_option("--claim", o.claim,
                   "the queues' claim mode: mysql or redis (the keyed queue's is mysql in both)")
        ->check(CLI::IsMember({"mysql", "redis"}));
    app.add_option("--without", o.without,
                   "fault kinds left out of the schedule, e.g. row_lock_long,restart_worker")
        ->delimiter(',')
        ->check([](const std::string& name) {
            return kind_named(name) ? std::string() : "no fault kind " + name;
        });
    app.add_option("--judge-concurrency-per-key", o.judge_concurrency_per_key,
                   "the per-key limit the verdict checks the keyed queue against (default: "
                   "the one configured; a lower one shows the check fail)")
        ->check(CLI::PositiveNumber);
    app.add_option("--judge-rate-per-key", o.judge_rate_per_key,
                   "the rows per period the verdict checks each key of the keyed queue's pushes "
                   "against (default: the rate_per_key configured; a lower one shows the check "
                   "fail)")
        ->check(CLI::PositiveNumber);
    app.add_option("--run-dir", o.run_dir, "where the config, the logs and the ledgers go")
        ->required();
    testing::parse_or_exit(app, argc, argv);
    if (app.count("--seed") == 0) o.seed = std::random_device{}();
    if (o.seconds == 0) o.seconds = static_cast<int>(std::max<std::int64_t>(80, o.tasks / 3000));
    return o;
}

// Everything finished: every row has all its outcomes, and no task waits in any list.
bool all_done(Cluster& cluster) {
    try {
        testing::MysqlClient db = cluster.db();
        if (db.scalar("SELECT COUNT(*) FROM chaos_once WHERE done = 0 AND rp_dead_at IS NULL") >
                0 ||
            db.scalar("SELECT COUNT(*) FROM chaos_paced WHERE done = 0") > 0 ||
            db.scalar("SELECT COUNT(*) FROM chaos_uuid WHERE done = 0") > 0 ||
            db.scalar("SELECT COUNT(*) FROM chaos_keyed WHERE done = 0") > 0 ||
            db.scalar("SELECT COUNT(*) FROM chaos_periodic WHERE rounds_left > 0") > 0) {
            return false;
        }
        auto redis = cluster.redis().connect();
        for (const char* queue : {"once", "periodic", "paced", "uuid", kKeyedQueue}) {
            const auto keys = protocol::keys_for(queue);
            if (testing::list_length(redis, keys.ready) + testing::list_length(redis, keys.done) >
                0) {
                return false;
            }
            for (const auto& key :
                 redis.command({"KEYS", keys.prefix + "processing:*"}).strings()) {
                if (testing::list_length(redis, key) > 0) return false;
            }
        }
        return true;
    } catch (const std::exception&) {
        return false;  // a server is still coming back
    }
}

// What is left when the drain timed out: rows not finished, and lists not empty, by name.
void print_leftovers(Cluster& cluster) {
    try {
        testing::MysqlClient db = cluster.db();
        std::printf(
            "chaos: left: %lld one-shot, %lld periodic, %lld paced, %lld uuid, %lld keyed rows "
            "not done\n",
            static_cast<long long>(
                db.scalar("SELECT COUNT(*) FROM chaos_once WHERE done = 0 AND rp_dead_at IS NULL")),
            static_cast<long long>(
                db.scalar("SELECT COUNT(*) FROM chaos_periodic WHERE rounds_left > 0")),
            static_cast<long long>(db.scalar("SELECT COUNT(*) FROM chaos_paced WHERE done = 0")),
            static_cast<long long>(db.scalar("SELECT COUNT(*) FROM chaos_uuid WHERE done = 0")),
            static_cast<long long>(db.scalar("SELECT COUNT(*) FROM chaos_keyed WHERE done = 0")));
        auto redis = cluster.redis().connect();
        for (const auto& key : redis.command({"KEYS", "rowpump:*"}).strings()) {
            if (redis.command({"TYPE", key}).string() != "list" ||
                key.find(":bad") != std::string::npos || key.find(":window") != std::string::npos) {
                continue;
            }
            const auto n = testing::list_length(redis, key);
            if (n > 0) {
                std::printf("chaos: left: %s holds %lld\n", key.c_str(), static_cast<long long>(n));
            }
        }
    } catch (const std::exception& e) {
        std::printf("chaos: left: cannot look: %s\n", e.what());
    }
}

int run(const Options& o) {
    std::vector<std::string> slot_names;
    ScheduleParams params;
    for (const WorkerSlot& slot : worker_slots()) {
        slot_names.push_back(slot.name);
        params.slot_language.push_back(static_cast<int>(slot.language));
    }
    params.seed = o.seed;
    for (const auto& name : o.without) params.without.push_back(*kind_named(name));
    params.run = std::chrono::seconds(o.seconds);
    params.worker_slots = static_cast<int>(slot_names.size());
    params.heartbeat_ttl = std::chrono::milliseconds(Cluster::kHeartbeatTtlMs);
    params.leader_timeout = std::chrono::milliseconds(Cluster::kLeaderTimeoutMs);
    const std::vector<Fault> schedule = make_schedule(params);
    const int seconds = std::max<int>(
        o.seconds,
        static_cast<int>(
            std::chrono::duration_cast<std::chrono::seconds>(schedule_end(schedule)).count()) +
            5);
    WorkloadShape shape = shape_for(o.tasks, seconds);
    shape.claim = o.claim;
    print_schedule(o.seed, o.tasks, shape, seconds, schedule, slot_names);
    if (!o.without.empty()) {
        std::string names;
        for (const auto& name : o.without) names += " " + name;
        std::printf("chaos: left out of the schedule (--without):%s\n", names.c_str());
    }

    Cluster cluster(o.run_dir, shape);
    std::atomic<int> redis_epoch{0};
    RateWatch rate_watch(cluster.redis().options(), "paced", redis_epoch);
    KeyRateWatch key_rate_watch(cluster.redis().options(), kKeyedQueue, shape.keyed_rate_period,
                                redis_epoch);
    cluster.start_dispatchers();
    cluster.start_workers();
    const auto start = Clock::now();
    Feeder feeder(cluster.login(), shape, std::chrono::seconds(seconds));

    FaultPlayer player(cluster, redis_epoch);
    std::vector<FaultRecord> played;
    bool fault_problems = false;
    std::future<FaultRecord> beside;  // a fault played alongside the next one
    for (const Fault& fault : schedule) {
        std::this_thread::sleep_until(start + fault.at);
        if (fault.alongside) {
            beside =
                std::async(std::launch::async, [&player, fault] { return player.play(fault); });
            continue;
        }
        const std::size_t first = played.size();
        played.push_back(player.play(fault));
        if (beside.valid()) played.push_back(beside.get());
        for (std::size_t i = first; i < played.size(); ++i) {
            print_played(played[i]);
            fault_problems = fault_problems || !played[i].problem.empty();
        }
    }
    const bool fed = testing::eventually(
        std::chrono::seconds(seconds) + 120s, [&] { return feeder.finished(); }, 200ms);
    if (!fed) std::printf("chaos: the feeder did not finish: %s\n", feeder.last_error().c_str());
    const bool done = testing::eventually(
        std::chrono::seconds(o.drain_timeout), [&] { return all_done(cluster); }, 500ms);
    const double finished_s = std::chrono::duration<double>(Clock::now() - start).count();
    if (!done) {
        std::printf("chaos: not finished %d s after the last insert\n", o.drain_timeout);
        print_leftovers(cluster);
    }
    feeder.stop();
    rate_watch.stop();
    key_rate_watch.stop();
    cluster.stop_workers();
    cluster.stop_dispatchers();

    const Ledger ledger = read_ledgers(cluster.ledger_dir());
    testing::MysqlClient db = cluster.db();
    Verdict verdict = judge(db, shape, ledger, played);
    verdict.inconsistent += static_cast<std::int64_t>(ledger.malformed);
    const RateVerdict rate = rate_watch.verdict(shape.paced_per_second, 1s);
    KeyLimitsVerdict keys;
    keys.concurrency = judge_concurrency_per_key(ledger.runs, kKeyedQueue, keyed_key,
                                                 o.judge_concurrency_per_key, played);
    keys.rate_limit = o.judge_rate_per_key > 0 ? o.judge_rate_per_key : shape.keyed_rate_rows;
    keys.rate_period = shape.keyed_rate_period;
    const KeyPushes key_pushes = key_rate_watch.pushes();
    keys.rate_keys = static_cast<std::int64_t>(key_pushes.size());
    keys.rate = judge_rate_per_key(key_pushes, keys.rate_limit, keys.rate_period);
    keys.rate_unreadable = key_rate_watch.malformed();
    std::map<std::string, std::int64_t> keyed_rows;  // rows of each key, as the feeder inserts
    for (std::int64_t id = 1; id <= shape.keyed_rows; ++id)
        ++keyed_rows[keyed_key(std::to_string(id))];
    keys.unrecorded = unrecorded_rows(key_pushes, keyed_rows);
    print_recoveries(played, recovery_times(played, feeder.once_timeline(), ledger));
    print_details(verdict, rate, keys, shape);
    print_summary(o.seed, shape.tasks(), verdict, rate, keys, finished_s);
    const bool passed = verdict.passed() && rate.violations == 0 && keys.violations() == 0 &&
                        !fault_problems && fed && done;
    if (!passed) testing::set_current_test_failed(true);  // keep the servers' directories
    return passed ? 0 : 1;
}

}  // namespace
}  // namespace rowpump::chaos

int main(int argc, char** argv) {
    const auto options = rowpump::chaos::parse_options(argc, argv);
    try {
        return rowpump::chaos::run(options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rowpump_chaos: %s\n", e.what());
        rowpump::testing::set_current_test_failed(true);
        return 2;
    }
}
