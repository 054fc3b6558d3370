// The conformance scenario "payload fields": a queue's `payload:` columns, of every type the
// README names, reach each SDK's handler as the row holds them, in both claim modes. The
// dispatcher reads them in the claim's own read and sends them after the token; the SDK's
// conformance worker logs each task's fields percent-encoded, so the log says exactly what the
// handler was given.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rowpump/common/protocol/messages.hpp"
#include "rowpump/testing/e2e_system.hpp"
#include "rowpump/testing/eventually.hpp"
#include "rowpump/testing/queue_redis.hpp"
#include "rowpump/testing/rowpump_cli.hpp"
#include "sdk_worker.hpp"

using namespace rowpump::testing;
using rowpump::protocol::percent_encode;

namespace {

constexpr std::int64_t kRows = 6;
const std::string kName = "Zoë 日本 😀 #";      // two-, three- and four-byte UTF-8
const std::string kBlob("\x00\xff\x80:%", 5);  // not UTF-8

std::string hex(const std::string& bytes) {
    static const char* const kHex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : bytes) {
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
    return out;
}

void create_payload_table(MysqlClient& db, const std::string& table) {
    db.exec("CREATE TABLE " + table +
            " (id INT NOT NULL PRIMARY KEY, status TINYINT NOT NULL DEFAULT 0, runs INT NOT NULL "
            "DEFAULT 0, n INT, big BIGINT, price DECIMAL(10,2), name VARCHAR(100) CHARACTER SET "
            "utf8mb4, at DATETIME(3), ts TIMESTAMP(3) NULL, note VARCHAR(20), empty VARCHAR(10), "
            "data BLOB) ENGINE=InnoDB");
    // TIMESTAMP values are written in this session's zone, +05:30, and stored as UTC; DATETIME
    // values are taken as written in the server's zone, +02:00 (SET GLOBAL in the test).
    db.exec("SET time_zone = '+05:30'");
    for (std::int64_t i = 1; i <= kRows; ++i) {
        const auto n = std::to_string(i);
        db.exec("INSERT INTO " + table +
                " (id, n, big, price, name, at, ts, note, empty, data) VALUES (" + n + ", " + n +
                " - 5, 9007199254740993 + " + n + ", " + n + " * 1.5, CONCAT(CONVERT(UNHEX('" +
                hex(kName) + "') USING utf8mb4), " + n +
                "), '2026-11-26 11:30:00.123', '2026-11-26 12:00:00.500', " +
                (i % 2 == 0 ? "'x'" : "NULL") + ", '', CONCAT(UNHEX('" + hex(kBlob) + "'), " + n +
                "))");
    }
}

QueueSpec payload_queue(const std::string& name, const std::string& claim) {
    QueueSpec q = e2e_queue();
    q.name = name;
    q.table = name;
    q.id = "id";
    q.order_by = "id";
    q.on_success = "status = :status, runs = runs + 1";
    q.claim = claim;
    q.lease = "5m";
    q.extra_lines = {"payload: [n, big, price, name, at, ts, note, empty, data]"};
    return q;
}

// What the worker logs for row i: "name=value" percent-encoded, a bare name for NULL. An SDK
// whose fields are text (Python's str, JavaScript's string) decodes them as UTF-8, bytes that
// are not as U+FFFD, and its worker logs that text's UTF-8; C++ gives the bytes.
std::multiset<std::string> expected_fields(std::int64_t i, bool bytes) {
    const std::string replaced = std::string("\x00", 1) + "\xEF\xBF\xBD\xEF\xBF\xBD:%";
    char price[32];
    std::snprintf(price, sizeof price, "%.2f", static_cast<double>(i) * 1.5);
    return {"n=" + percent_encode(std::to_string(i - 5)),
            "big=" + std::to_string(9007199254740993LL + i),
            std::string("price=") + price,
            "name=" + percent_encode(kName + std::to_string(i)),
            "at=" + percent_encode("2026-11-26T09:30:00.123Z"),
            "ts=" + percent_encode("2026-11-26T06:30:00.500Z"),
            i % 2 == 0 ? "note=x" : "note",
            "empty=",
            "data=" + percent_encode((bytes ? kBlob : replaced) + std::to_string(i))};
}

const Sdk& current_sdk() {
    const auto index = GENERATE(range(std::size_t{0}, selected_sdks().size()));
    return selected_sdks()[index];
}

}  // namespace

TEST_CASE("payload fields", "[conformance][payload]") {
    const Sdk& sdk = current_sdk();
    INFO("sdk " << sdk.name);
    TestBed bed;
    auto db = bed.db();
    db.exec("SET GLOBAL time_zone = '+02:00'");
    const std::vector<std::string> queues = {"pl_mysql", "pl_redis"};
    std::vector<QueueSpec> specs;
    for (const auto& q : queues) {
        create_payload_table(db, q);
        specs.push_back(payload_queue(q, q == "pl_redis" ? "redis" : "mysql"));
    }
    const auto config = bed.write_config(specs);
    migrate_apply(config);
    auto dispatcher = bed.start_dispatcher(config);
    auto redis = bed.redis_client();

    std::vector<std::unique_ptr<SdkWorker>> workers;
    for (const auto& q : queues) {
        workers.push_back(
            std::make_unique<SdkWorker>(sdk, bed.dir, redis_flags(bed.redis.port()), "w-" + q,
                                        std::vector<std::string>{"--value", "status=1"}, q));
    }
    for (std::size_t w = 0; w < queues.size(); ++w) {
        const auto& q = queues[w];
        INFO("queue " << q << " (claim: " << (q == "pl_redis" ? "redis" : "mysql") << ")");
        const bool done = eventually(
            60s, [&] { return db.scalar("SELECT COUNT(*) FROM " + q + " WHERE status = 0") == 0; });
        INFO(describe_stats(redis, q) << "\nworker output:\n"
                                      << workers[w]->output() << "\ndispatcher log:\n"
                                      << dispatcher->log_tail());
        REQUIRE(done);
        CHECK(db.scalar("SELECT COUNT(*) FROM " + q + " WHERE runs <> 1") == 0);
        const auto handled = workers[w]->handled();
        CHECK(handled.size() == static_cast<std::size_t>(kRows));
        std::set<std::string> seen;
        for (const auto& task : handled) {
            INFO("row " << task.id);
            CHECK(seen.insert(task.id).second);
            const auto id = std::stoll(task.id);
            CHECK(std::multiset<std::string>(task.fields.begin(), task.fields.end()) ==
                  expected_fields(id, sdk.name == "cpp"));
        }
        CHECK(queue_stat(redis, q, "bad") == 0);
        CHECK(queue_stat(redis, q, "stale") == 0);
    }
}
