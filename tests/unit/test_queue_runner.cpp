// QueueRunner with fakes of what it orchestrates (MysqlSide, RedisSide, ClaimPath): which hooks a
// cycle calls, in which order, and what reaches each side.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "rowpump/common/redis/redis.hpp"
#include "rowpump/dispatcher/loop/queue_runner.hpp"
#include "rowpump/dispatcher/loop/unknown_pushes.hpp"

using namespace rowpump;

namespace {

class FakeOutcomes : public Outcomes {
public:
    AppliedCounts apply(const std::vector<protocol::Done>& outcomes) override {
        AppliedCounts counts;
        for (std::size_t i = 0; i < outcomes.size(); ++i) {
            const auto& done = outcomes[i];
            if (locked.count(done.task.id) != 0) {
                counts.locked.push_back(i);
                continue;
            }
            applied.push_back(done.task.id);
            if (done.verb == Verb::success) ++counts.completed;
            if (done.verb == Verb::retry) ++counts.retried;
        }
        return counts;
    }
    std::vector<std::string> applied;  // ids, in order
    std::set<std::string> locked;      // ids of rows another transaction holds locked
};

// Both sessions' outcomes, kept by the test across reconnects.
struct FakeMysqlState {
    FakeOutcomes outcomes;  // the done list's
    FakeOutcomes reaped;    // of tasks taken back, on the claim session
    int opened = 0;
};

class FakeMysql : public MysqlSide {
public:
    explicit FakeMysql(FakeMysqlState& state) : state_(state) {}
    Outcomes& outcomes() override { return state_.outcomes; }
    Outcomes& reaped_outcomes() override { return state_.reaped; }

private:
    FakeMysqlState& state_;
};

struct FakeRedisState {
    std::string leader_id;        // this runner's, as open_redis was given it
    std::string holder;           // who holds the leader lock; "" for free: the runner takes it
    std::vector<DoneEntry> done;  // the done list
    std::vector<ReapedWorker> dead_workers;
    // fails: the connection breaks before the push runs; reply_lost: after it ran.
    enum class PushResult { ok, fails, reply_lost, refused } push_result = PushResult::ok;
    bool ack_refused = false;
    std::vector<std::string> pushed;  // ready messages, all held (the ready list)
    std::vector<std::string> acked;   // done messages
    std::vector<std::string> set_aside;
    StatsDelta acked_stats;
    int opened = 0;
};

class FakeRedis : public RedisSide {
public:
    explicit FakeRedis(FakeRedisState& state) : state_(state), keys_(protocol::keys_for("q")) {}

    const protocol::Keys& keys() const override { return keys_; }
    void announce() override {}
    std::int64_t ready_length() override { return 0; }
    Lead lead() override {
        const bool free = state_.holder.empty();
        if (free) state_.holder = state_.leader_id;
        return {state_.holder, free, "epoch"};
    }
    void resign() override {
        if (state_.holder == state_.leader_id) state_.holder.clear();
    }
    std::vector<std::pair<std::string, std::string>> key_limits(std::size_t) override { return {}; }
    PushWindow push(const std::vector<ClaimedRow>& rows, const std::vector<KeyRate>&) override {
        PushWindow window;
        window.rows_left = 1000000;
        if (rows.empty()) return window;
        if (state_.push_result == FakeRedisState::PushResult::fails)
            throw redis::IoError("connection reset by peer");
        if (state_.push_result == FakeRedisState::PushResult::refused ||
            state_.holder != state_.leader_id) {
            window.leader = false;
            return window;
        }
        for (const auto& row : rows)
            state_.pushed.push_back(protocol::format_ready(row.id, row.token));
        if (state_.push_result == FakeRedisState::PushResult::reply_lost)
            throw redis::IoError("connection reset by peer");
        window.pushed = true;
        return window;
    }
    Inbox take_done(std::int64_t) override { return {state_.done, false}; }
    bool ack_done(const std::vector<DoneEntry>& entries, StatsDelta stats) override {
        if (state_.ack_refused) return false;
        for (const auto& entry : entries) state_.acked.push_back(entry.message);
        state_.done.erase(state_.done.begin(),
                          state_.done.begin() + static_cast<std::ptrdiff_t>(entries.size()));
        for (const auto& entry : entries) {
            if (entry.locked) state_.done.push_back(entry);  // back at the end, as ack_done.lua
        }
        state_.acked_stats = std::move(stats);
        return true;
    }
    void move_aside(const std::vector<DoneEntry>& entries, StatsDelta) override {
        for (const auto& entry : entries) state_.set_aside.push_back(entry.message);
    }
    std::int64_t server_time_ms() override {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }
    std::vector<ReapedWorker> reap_dead_workers() override {
        auto workers = std::move(state_.dead_workers);
        state_.dead_workers.clear();
        return workers;
    }
    std::vector<std::string> held(const std::vector<std::string>& messages) override {
        std::vector<std::string> found;
        for (const auto& message : messages) {
            if (std::find(state_.pushed.begin(), state_.pushed.end(), message) !=
                state_.pushed.end())
                found.push_back(message);
        }
        return found;
    }
    std::vector<std::string> held_all() override { return {}; }
    std::string token_secret() override { return std::string(64, 'a'); }
    void add_stats(const StatsDelta&) override {}
    void offer_standby() override {}
    ShardLeaders shard_leaders() override { return {}; }

private:
    FakeRedisState& state_;
    protocol::Keys keys_;
};

class FakeLinks : public QueueLinks {
public:
    std::unique_ptr<MysqlSide> open_mysql(ClaimPath&) override {
        ++mysql.opened;
        return std::make_unique<FakeMysql>(mysql);
    }
    std::unique_ptr<RedisSide> open_redis(const std::string& leader_id) override {
        ++redis.opened;
        redis.leader_id = leader_id;
        return std::make_unique<FakeRedis>(redis);
    }
    FakeMysqlState mysql;
    FakeRedisState redis;
};

// Records every hook by name; claims the rows it is given once. Settles pushes whose outcome
// is unknown as RowClaim does (UnknownPushes), giving back the rows of those that did not land.
class FakePath : public ClaimPath {
public:
    void open(MysqlSession&) override {}
    void close() override {}
    OutcomeRules outcome_rules() const override { return {}; }
    void on_lead(RedisSide& redis, bool leading, bool took_free, const std::string&) override {
        hooks.push_back(std::string("on_lead") + (leading ? " leading" : "") +
                        (took_free ? " took_free" : ""));
        if (!unknown.any()) return;
        const auto settled = unknown.settle(redis);
        unknown.clear();
        hooks.push_back("settled: " + std::to_string(settled.landed.size()) + " landed, " +
                        std::to_string(settled.not_landed.size()) + " not");
        for (const auto& claim : settled.not_landed)
            given_back.insert(given_back.end(), claim.rows.begin(), claim.rows.end());
    }
    void on_lead_lost() override { hooks.push_back("on_lead_lost"); }
    void on_redis_lost() override { hooks.push_back("on_redis_lost"); }
    void on_outcomes_taken(std::vector<DoneEntry>& done) override {
        hooks.push_back("on_outcomes_taken " + std::to_string(done.size()));
        for (auto& entry : done) {
            if (entry.done && entry.done->task.id == stale_id) entry.stale = true;
        }
    }
    bool claims_beside_outcomes() const override { return beside; }
    std::int64_t before_claim(RedisSide&, std::int64_t capacity,
                              const std::vector<DoneEntry>&) override {
        hooks.push_back("before_claim " + std::to_string(capacity));
        return 0;
    }
    const std::vector<ClaimedRow>& claim(std::int64_t) override {
        hooks.push_back("claim");
        claimed = std::move(to_claim);
        to_claim.clear();
        return claimed;
    }
    void on_pushed() override { hooks.push_back("on_pushed " + std::to_string(claimed.size())); }
    void on_push_unknown() override {
        hooks.push_back("on_push_unknown");
        Claim claim;
        claim.rows = claimed;
        unknown.add(claim);
    }
    std::int64_t on_not_pushed() override {
        hooks.push_back("on_not_pushed");
        return static_cast<std::int64_t>(claimed.size());
    }
    void on_outcomes_finished(const std::vector<DoneEntry>& entries) override {
        std::string ids;
        for (const auto& entry : entries) ids += " " + entry.done->task.id;
        hooks.push_back("on_outcomes_finished" + ids);
    }
    std::string describe() const override { return ""; }
    std::vector<std::string> statements(const QueueSql&) const override { return {}; }

    std::vector<ClaimedRow> to_claim;  // what the next claim returns
    std::vector<ClaimedRow> claimed;
    UnknownPushes unknown;
    std::vector<ClaimedRow> given_back;  // claims of pushes that did not land
    std::string stale_id;                // on_outcomes_taken marks the entry of this row stale
    bool beside = false;
    std::vector<std::string> hooks;
};

DoneEntry success(const std::string& id, const std::string& token) {
    DoneEntry entry;
    entry.done.emplace();
    entry.done->task = Task{id, token, 1, protocol::format_ready(id, token)};
    entry.done->verb = Verb::success;
    entry.message = protocol::format_done(*entry.done);
    return entry;
}

QueueSource queue_source() {
    QueueSource source;
    source.queue.name = "q";
    source.queue.table = "t";
    source.queue.id = "id";
    source.queue.batch = 10;
    return source;
}

// A runner over the fakes, driven a step at a time.
struct Bed {
    QueueSource source = queue_source();
    std::atomic<bool> stopping{false};
    std::mutex mutex;
    std::condition_variable wake;
    QueueMetrics metrics{"q"};
    QueueHealth health{"q"};
    FakeLinks links;
    FakePath path;
    QueueRunner runner{source, stopping, mutex, wake, metrics, health, nullptr, links, path};
};

const std::string kToken1 = "00000000000000A1-1-31", kToken2 = "00000000000000A1-1-32";

}  // namespace

TEST_CASE("QueueRunner: a cycle takes the lead, claims and pushes; the next applies the outcome",
          "[queue_runner]") {
    Bed bed;
    bed.path.to_claim = {{"1", kToken1}, {"2", kToken2}};
    bed.runner.step();
    CHECK(bed.links.mysql.opened == 1);
    CHECK(bed.links.redis.opened == 1);
    CHECK(bed.path.hooks == std::vector<std::string>{"on_lead leading took_free",
                                                     "on_outcomes_taken 0", "before_claim 10",
                                                     "claim", "on_pushed 2"});
    CHECK(bed.links.redis.pushed == std::vector<std::string>{protocol::format_ready("1", kToken1),
                                                             protocol::format_ready("2", kToken2)});

    bed.path.hooks.clear();
    bed.links.redis.done = {success("1", kToken1)};
    bed.runner.step();
    CHECK(bed.links.mysql.outcomes.applied == std::vector<std::string>{"1"});
    CHECK(bed.links.mysql.reaped.applied.empty());
    CHECK(bed.links.redis.acked == std::vector<std::string>{success("1", kToken1).message});
    CHECK(protocol::stat(bed.links.redis.acked_stats, protocol::kStatCompleted) == 1);
    // The lock was renewed by the push: no lead script, so nothing taken free.
    CHECK(bed.path.hooks == std::vector<std::string>{"on_lead leading", "on_outcomes_taken 1",
                                                     "before_claim 10", "claim",
                                                     "on_outcomes_finished 1"});
    CHECK(bed.links.mysql.opened == 1);  // connections are kept
    CHECK(bed.links.redis.opened == 1);
}

TEST_CASE("QueueRunner: outcomes beside the claim are applied and acknowledged all the same",
          "[queue_runner]") {
    Bed bed;
    bed.path.beside = true;
    bed.links.redis.done = {success("1", kToken1), success("2", kToken2)};
    bed.runner.step();
    CHECK(bed.links.mysql.outcomes.applied == std::vector<std::string>{"1", "2"});
    CHECK(bed.links.redis.acked.size() == 2);
    CHECK(bed.path.hooks.back() == "on_outcomes_finished 1 2");
}

TEST_CASE("QueueRunner: an outcome the path marks stale is acknowledged, not applied",
          "[queue_runner]") {
    Bed bed;
    bed.path.stale_id = "1";
    bed.links.redis.done = {success("1", kToken1), success("2", kToken2)};
    bed.runner.step();
    CHECK(bed.links.mysql.outcomes.applied == std::vector<std::string>{"2"});
    CHECK(bed.links.redis.acked.size() == 2);
    CHECK(protocol::stat(bed.links.redis.acked_stats, protocol::kStatStale) == 1);
    CHECK(protocol::stat(bed.links.redis.acked_stats, protocol::kStatCompleted) == 1);
}

TEST_CASE(
    "QueueRunner: a push that fails before it ran is found not landed on reconnect, and its "
    "claims go back",
    "[queue_runner]") {
    Bed bed;
    bed.path.to_claim = {{"1", kToken1}};
    bed.links.redis.push_result = FakeRedisState::PushResult::fails;
    bed.runner.step();
    CHECK(bed.path.hooks == std::vector<std::string>{"on_lead leading took_free",
                                                     "on_outcomes_taken 0", "before_claim 10",
                                                     "claim", "on_push_unknown", "on_redis_lost"});
    CHECK(bed.links.redis.pushed.empty());
    CHECK(bed.path.given_back.empty());  // not before Redis answers
    CHECK(bed.metrics.errors(ErrorKind::redis_connection) == 1);

    bed.links.redis.push_result = FakeRedisState::PushResult::ok;
    bed.path.to_claim = {{"1", kToken1}};
    bed.path.hooks.clear();
    bed.runner.step();
    CHECK(bed.links.redis.opened == 2);
    CHECK(bed.links.mysql.opened == 1);  // MySQL did not fail
    CHECK(bed.path.hooks.at(1) == "settled: 0 landed, 1 not");
    CHECK(bed.path.given_back.size() == 1);
    CHECK(bed.path.hooks.back() == "on_pushed 1");
    CHECK(bed.links.redis.pushed.size() == 1);
}

TEST_CASE(
    "QueueRunner: a push whose reply is lost is found landed on reconnect, its claims kept, and "
    "nothing is pushed twice",
    "[queue_runner]") {
    Bed bed;
    bed.path.to_claim = {{"1", kToken1}, {"2", kToken2}};
    bed.links.redis.push_result = FakeRedisState::PushResult::reply_lost;
    bed.runner.step();
    CHECK(bed.path.hooks == std::vector<std::string>{"on_lead leading took_free",
                                                     "on_outcomes_taken 0", "before_claim 10",
                                                     "claim", "on_push_unknown", "on_redis_lost"});
    CHECK(bed.links.redis.pushed.size() == 2);  // it ran in Redis
    CHECK(bed.metrics.errors(ErrorKind::redis_connection) == 1);

    bed.links.redis.push_result = FakeRedisState::PushResult::ok;
    bed.path.hooks.clear();
    bed.runner.step();
    CHECK(bed.links.redis.opened == 2);
    CHECK(bed.path.hooks.at(1) == "settled: 1 landed, 0 not");
    CHECK(bed.path.given_back.empty());
    CHECK(bed.links.redis.pushed.size() == 2);  // once each

    // Settled once: the next reconnect asks nothing.
    bed.path.hooks.clear();
    bed.runner.step();
    CHECK(std::find(bed.path.hooks.begin(), bed.path.hooks.end(), "settled: 1 landed, 0 not") ==
          bed.path.hooks.end());
}

TEST_CASE("QueueRunner: a push the leader lock refuses gives the claims back and the lead up",
          "[queue_runner]") {
    Bed bed;
    bed.runner.step();  // takes the lead
    bed.path.hooks.clear();
    bed.links.redis.holder = "another dispatcher";
    bed.path.to_claim = {{"1", kToken1}};
    bed.runner.step();
    CHECK(bed.path.hooks == std::vector<std::string>{"on_lead leading", "on_outcomes_taken 0",
                                                     "before_claim 10", "claim", "on_not_pushed",
                                                     "on_lead_lost"});
    CHECK(bed.links.redis.pushed.empty());

    // Stands by while the other holds the lock: no cycle.
    bed.path.hooks.clear();
    bed.runner.step();
    CHECK(bed.path.hooks == std::vector<std::string>{"on_lead"});
}

TEST_CASE(
    "QueueRunner: a refused trim of the done list loses the lead; the outcome is not finished",
    "[queue_runner]") {
    Bed bed;
    bed.links.redis.ack_refused = true;
    bed.links.redis.done = {success("1", kToken1)};
    bed.runner.step();
    CHECK(bed.links.mysql.outcomes.applied == std::vector<std::string>{"1"});
    CHECK(bed.links.redis.acked.empty());
    CHECK(bed.path.hooks.back() == "on_lead_lost");
    for (const auto& hook : bed.path.hooks) CHECK(hook.rfind("on_outcomes_finished", 0) != 0);
}

TEST_CASE("QueueRunner: tasks taken back from a dead worker are applied on the claim session",
          "[queue_runner]") {
    Bed bed;
    ReapedWorker worker;
    worker.worker_id = "w1";
    worker.tasks.push_back(Task{"7", kToken1, 1, protocol::format_ready("7", kToken1)});
    bed.links.redis.dead_workers.push_back(worker);
    bed.runner.step();
    CHECK(bed.links.mysql.reaped.applied == std::vector<std::string>{"7"});
    CHECK(bed.links.mysql.outcomes.applied.empty());
    CHECK(bed.links.redis.set_aside.size() == 1);  // move_aside gets every entry
    CHECK(bed.path.hooks == std::vector<std::string>{"on_lead leading took_free",
                                                     "on_outcomes_taken 0", "on_outcomes_taken 1",
                                                     "on_outcomes_finished 7", "before_claim 10",
                                                     "claim"});
}

TEST_CASE(
    "QueueRunner: an outcome whose row is locked goes back to the done list; the others apply",
    "[queue_runner]") {
    Bed bed;
    bed.links.redis.done = {success("1", kToken1), success("2", kToken2)};
    bed.links.mysql.outcomes.locked = {"1"};
    bed.runner.step();
    CHECK(bed.links.mysql.outcomes.applied == std::vector<std::string>{"2"});
    REQUIRE(bed.links.redis.done.size() == 1);  // row 1's outcome, back in the list
    CHECK(bed.links.redis.done[0].message == success("1", kToken1).message);
    CHECK(bed.links.redis.acked_stats[protocol::kStatCompleted] == 1);
    CHECK(bed.links.redis.acked_stats[protocol::kStatStale] == 0);
    CHECK(std::count(bed.path.hooks.begin(), bed.path.hooks.end(), "on_outcomes_finished 2") == 1);

    bed.runner.step();  // still locked: nothing changes
    CHECK(bed.links.mysql.outcomes.applied == std::vector<std::string>{"2"});
    CHECK(bed.links.redis.done.size() == 1);

    bed.links.mysql.outcomes.locked.clear();  // the lock goes
    bed.runner.step();
    CHECK(bed.links.mysql.outcomes.applied == std::vector<std::string>{"2", "1"});
    CHECK(bed.links.redis.done.empty());
    CHECK(bed.links.redis.acked_stats[protocol::kStatCompleted] == 1);
}

TEST_CASE("QueueRunner: a task taken back whose row is locked waits; the others are applied",
          "[queue_runner]") {
    Bed bed;
    bed.links.redis.dead_workers = {{"w1",
                                     {Task{"1", kToken1, 1, protocol::format_ready("1", kToken1)},
                                      Task{"2", kToken2, 1, protocol::format_ready("2", kToken2)}},
                                     0,
                                     0}};
    bed.links.mysql.reaped.locked = {"1"};
    bed.runner.step();
    CHECK(bed.links.mysql.reaped.applied == std::vector<std::string>{"2"});
    CHECK(bed.links.redis.set_aside.size() == 1);
    bed.links.mysql.reaped.locked.clear();
    bed.runner.step();
    CHECK(bed.links.mysql.reaped.applied == std::vector<std::string>{"2", "1"});
    CHECK(bed.links.redis.set_aside.size() == 2);
}
