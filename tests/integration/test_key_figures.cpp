// The per-key figures of a queue with group_by (docs/fairness.md, "Per-key figures"): the
// leader's top keys and every other key together in /metrics, `rowpump status` and the
// dashboard's JSON, with counts equal to what the workers saw per key; a key whose text has
// quotes, a newline and markup escaped in each; the per-key limits of rowpump:{q}:key_limits
// shown as written.

#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/testing/e2e_worker.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/http_client.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/test_bed.hpp"
#include "rowpump/worker.hpp"

using namespace rowpump::testing;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

// Sorts last in byte order of the keys ('w' after 'k'), and has the most rows.
const std::string kOddKey = "we\"ird\\ <script>window.rp_xss=1</script>\nkey";
constexpr int kKeys = 25;  // k01..k24 and kOddKey
constexpr std::size_t kTop = 20;

std::string key_name(int i) {
    if (i == kKeys) return kOddKey;
    char name[8];
    std::snprintf(name, sizeof name, "k%02d", i);
    return name;
}

// Key i (1..25) has 10 + i rows; ids are 1000 * i + n.
std::map<std::string, std::string> seed_keys(MysqlClient& db) {
    db.exec(
        "CREATE TABLE user_block_status (user_id BIGINT PRIMARY KEY, status TINYINT NOT NULL "
        "DEFAULT 0, updated_time DATETIME(3) NOT NULL, tenant VARCHAR(255) NOT NULL, "
        "KEY (updated_time), KEY tenant_order (tenant, updated_time)) ENGINE=InnoDB");
    std::map<std::string, std::string> key_of;
    for (int i = 1; i <= kKeys; ++i) {
        db.exec("INSERT INTO user_block_status (user_id, updated_time, tenant) SELECT " +
                std::to_string(1000 * i) + " + seq, NOW(3) - INTERVAL 1 HOUR, " +
                sql_quote(key_name(i)) + " FROM seq_1_to_" + std::to_string(10 + i));
        for (int n = 1; n <= 10 + i; ++n) key_of[std::to_string(1000 * i + n)] = key_name(i);
    }
    return key_of;
}

// The Prometheus label value of a key's text.
std::string label(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '\\' || c == '"') out += '\\';
        out += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    return out;
}

// name{queue="tenants",key="..."} -> value, for one family.
std::map<std::string, double> by_key(const Samples& samples, const std::string& family) {
    std::map<std::string, double> out;
    const std::string prefix = family + "{queue=\"tenants\",key=\"";
    for (const auto& [series, value] : samples) {
        if (series.rfind(prefix, 0) != 0) continue;
        out[series.substr(prefix.size(), series.size() - prefix.size() - 2)] = value;
    }
    return out;
}

}  // namespace

TEST_CASE(
    "per-key figures: the top keys and (other) in /metrics, status and the dashboard, "
    "counted as the workers saw them, any key text escaped",
    "[dispatcher][group_by][key_figures]") {
    TestBed bed;
    MysqlClient db = bed.db();
    const auto key_of = seed_keys(db);
    QueueSpec queue;
    queue.name = "tenants";
    queue.batch = 50;
    queue.due = "status = 0 AND updated_time < NOW(3)";
    queue.on_success = "status = :status";
    queue.extra_lines = {"group_by: tenant", "concurrency_per_key: 2"};
    const int port = free_port();
    ConfigSpec spec = bed.config_spec({queue});
    spec.extra_lines = {"http:", "  listen: \"127.0.0.1:" + std::to_string(port) + "\"",
                        "due_count: { interval: 200ms }"};
    const std::string config = write_config(bed.dir.file("rowpump.yaml"), spec);
    migrate_apply(config);
    auto redis = bed.redis_client();
    const auto keys = rowpump::protocol::keys_for("tenants");
    // Per-key limits as an operator (or `rowpump limit`) writes them; shown as written (and
    // applied: chosen so that every key still has 2 tasks in flight).
    redis.command({"HSET", keys.key_limits, kOddKey, "rate=5/1s concurrency=2", "k01", "weight=3"});
    auto dispatcher = bed.start_dispatcher(config);
    const auto scrape = [&] {
        const auto r = http_get(port, "/metrics");
        return r.status == 200 ? parse_prometheus(r.body) : Samples{};
    };

    // No worker yet: every key has its 2 tasks in flight (ready), and claims pass them over.
    REQUIRE(eventually(30s, [&] { return list_length(redis, ready_key("tenants")) == 2 * kKeys; }));
    Samples m;
    REQUIRE(eventually(30s, [&] {
        m = scrape();
        const auto in_flight = by_key(m, "rowpump_key_in_flight");
        return in_flight.size() == kTop + 1 && in_flight.count("(other)") == 1 &&
               in_flight.at("(other)") == 2 * (kKeys - kTop);
    }));
    {
        // All tie: the first 20 keys in byte order are the top ones.
        const auto in_flight = by_key(m, "rowpump_key_in_flight");
        const auto pushed = by_key(m, "rowpump_key_pushed_total");
        INFO(::Catch::Detail::stringify(in_flight));
        CHECK(pushed.size() == kTop + 1);
        for (int i = 1; i <= static_cast<int>(kTop); ++i) {
            CHECK(in_flight.at(key_name(i)) == 2);
            CHECK(pushed.at(key_name(i)) == 2);
        }
        CHECK(pushed.at("(other)") == 2 * (kKeys - kTop));
        double passed = 0;
        for (const auto& [key, n] : by_key(m, "rowpump_key_passed_over_total")) passed += n;
        CHECK(passed > 0);
    }

    // A worker runs every row; what it saw per key is what /metrics says.
    std::mutex mutex;
    std::map<std::string, int> seen;
    rowpump::WorkerOptions options;
    options.redis.host = "127.0.0.1";
    options.redis.port = bed.redis.port();
    options.queue = "tenants";
    options.threads = 4;
    rowpump::Worker worker(options);
    std::int64_t rows = 0;
    for (int i = 1; i <= kKeys; ++i) rows += 10 + i;
    {
        RunningWorker run(worker, [&](const rowpump::Task& task) {
            std::lock_guard<std::mutex> lock(mutex);
            ++seen[key_of.at(task.id)];
            return rowpump::Outcome::success({{"status", "1"}});
        });
        REQUIRE(eventually(60s, [&] {
            return db.scalar("SELECT COUNT(*) FROM user_block_status WHERE status = 1") == rows;
        }));
    }
    // Top 20 by tasks pushed once nothing is in flight: the odd key (35) and k24..k06; the
    // rest, k01..k05, in (other).
    std::map<std::string, double> want;
    double other = 0;
    for (int i = 1; i <= kKeys; ++i) {
        const auto name = key_name(i);
        REQUIRE(seen[name] == 10 + i);  // each row ran once
        if (i > kKeys - static_cast<int>(kTop))
            want[label(name)] = seen[name];
        else
            other += seen[name];
    }
    want["(other)"] = other;
    std::map<std::string, double> pushed;
    const bool settled = eventually(30s, [&] {
        m = scrape();
        pushed = by_key(m, "rowpump_key_pushed_total");
        return pushed == want;
    });
    INFO("/metrics: " << ::Catch::Detail::stringify(pushed));
    INFO("workers saw: " << ::Catch::Detail::stringify(want));
    REQUIRE(settled);
    for (const auto& [key, n] : by_key(m, "rowpump_key_in_flight")) CHECK(n == 0);

    // promtool takes the escaped key.
    const auto text = http_get(port, "/metrics").body;
    CHECK(text.find("key=\"" + label(kOddKey) + "\"") != std::string::npos);
    const auto path = bed.dir.file("metrics.txt");
    write_file(path, text);
    const auto promtool = run_program({"sh", "-c", "promtool check metrics < '" + path + "' 2>&1"});
    INFO(promtool.describe());
    CHECK(promtool.status.success());

    // rowpump status --json: the same keys, the odd one as it is; the limits as written.
    const auto status = rowpump_cli({"status", "--json", "-c", config});
    INFO(status.describe());
    REQUIRE(status.status.success());
    const auto line = json::parse(status.out.substr(0, status.out.find('\n')));
    REQUIRE(line["keys"].is_object());
    REQUIRE(line["keys"]["top"].size() == kTop);
    CHECK(line["keys"]["top"][0]["key"] == kOddKey);
    CHECK(line["keys"]["top"][0]["pushed"] == 10 + kKeys);
    CHECK(line["keys"]["other"]["pushed"] == other);
    CHECK(line["key_limits"]["total"] == 2);
    CHECK(line["key_limits"]["shown"] ==
          json::array({{{"key", "k01"}, {"limits", "weight=3"}},
                       {{"key", kOddKey}, {"limits", "rate=5/1s concurrency=2"}}}));
    // Without --json: one line per key, the odd key's newline escaped.
    const auto plain = rowpump_cli({"status", "-c", config});
    INFO(plain.describe());
    CHECK(plain.out.find("  key 'we\"ird\\\\ <script>window.rp_xss=1</script>\\nkey'") !=
          std::string::npos);
    CHECK(plain.out.find("\nkey'") == std::string::npos);
    CHECK(plain.out.find("  limit 'k01' weight=3\n") != std::string::npos);

    // The dashboard's JSON: the same.
    const auto state = json::parse(http_get(port, "/api/state").body);
    const auto& q = state["queues"][0];
    CHECK(q["keys"]["top"][0]["key"] == kOddKey);
    CHECK(q["key_limits"]["total"] == 2);
}

// rowpump:{q}:key_limits is the operator's: status reads it with HSCAN and shows at most
// 1,000 entries, in key order, with how many there are; values cut, never the whole hash.
TEST_CASE("per-key limits: status shows at most 1,000 of a larger hash, and its size",
          "[dispatcher][group_by][key_figures]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_keys(db);
    QueueSpec queue;
    queue.name = "tenants";
    queue.extra_lines = {"group_by: tenant"};
    const std::string config = bed.write_config({queue});
    migrate_apply(config);
    auto redis = bed.redis_client();
    const auto keys = rowpump::protocol::keys_for("tenants");
    std::vector<std::string> hset{"HSET", keys.key_limits};
    for (int i = 0; i < 1500; ++i) {
        char name[16];
        std::snprintf(name, sizeof name, "t%05d", i);
        hset.push_back(name);
        hset.push_back("concurrency=" + std::to_string(i));
    }
    hset.push_back("long");
    hset.push_back("weight=1 " + std::string(100000, 'x'));
    redis.command(hset);

    const auto status = rowpump_cli({"status", "--json", "-c", config});
    INFO(status.describe());
    REQUIRE(status.status.success());
    const auto line = json::parse(status.out.substr(0, status.out.find('\n')));
    CHECK(line["keys"].is_null());  // no dispatcher has run
    const auto& limits = line["key_limits"];
    CHECK(limits["total"] == 1501);
    REQUIRE(limits["shown"].size() == 1000);
    std::string previous;
    for (const auto& entry : limits["shown"]) {
        const auto key = entry["key"].get<std::string>();
        CHECK(key > previous);
        previous = key;
        if (key == "long") {
            CHECK(entry["limits"].get<std::string>().size() == 256);
        } else {
            CHECK(entry["limits"] == "concurrency=" + std::to_string(std::stoi(key.substr(1))));
        }
    }
    const auto plain = rowpump_cli({"status", "-c", config});
    CHECK(plain.out.find("  ... and 501 more per-key limits\n") != std::string::npos);
}

// A standby counts nothing itself: its /metrics shows the top keys the leader published.
TEST_CASE("per-key figures: a standby's /metrics shows the leader's",
          "[dispatcher][group_by][key_figures]") {
    TestBed bed;
    MysqlClient db = bed.db();
    seed_keys(db);
    QueueSpec queue;
    queue.name = "tenants";
    queue.batch = 50;
    queue.extra_lines = {"group_by: tenant", "concurrency_per_key: 1"};
    const auto config_on = [&](int port, const std::string& name) {
        ConfigSpec spec = bed.config_spec({queue});
        spec.extra_lines = {"http:", "  listen: \"127.0.0.1:" + std::to_string(port) + "\"",
                            "due_count: { interval: 200ms }"};
        return write_config(bed.dir.file(name), spec);
    };
    const int leader_port = free_port(), standby_port = free_port();
    const auto leader_config = config_on(leader_port, "leader.yaml");
    const auto standby_config = config_on(standby_port, "standby.yaml");
    migrate_apply(leader_config);
    auto leader = bed.start_dispatcher(leader_config, "leader.log");
    auto redis = bed.redis_client();
    // No worker: one task in flight per key, 25 in the ready list.
    REQUIRE(eventually(30s, [&] { return list_length(redis, ready_key("tenants")) == kKeys; }));
    auto standby = bed.start_dispatcher(standby_config, "standby.log");
    const auto figures = [](int port) {
        const auto r = http_get(port, "/metrics");
        if (r.status != 200) return std::map<std::string, double>{};
        const auto m = parse_prometheus(r.body);
        return by_key(m, "rowpump_key_pushed_total");
    };
    std::map<std::string, double> want;
    for (int i = 1; i <= static_cast<int>(kTop); ++i) want[label(key_name(i))] = 1;
    want["(other)"] = kKeys - kTop;
    std::map<std::string, double> at_leader, at_standby;
    REQUIRE(eventually(30s, [&] {
        at_leader = figures(leader_port);
        at_standby = figures(standby_port);
        return at_leader == want && at_standby == want;
    }));
    const auto standby_metrics = parse_prometheus(http_get(standby_port, "/metrics").body);
    CHECK(sample(standby_metrics, "rowpump_leader{queue=\"tenants\"}") == 0);
    CHECK(sample(standby_metrics, "rowpump_dispatched_total{queue=\"tenants\"}") == 0);
}
