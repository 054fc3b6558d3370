// Config that cannot escape its place: durations bounded to what MySQL and Redis take, the
// worker delay cap, bookkeeping columns no SQL of the queue uses, and where each key is.

#include <catch2/catch.hpp>

#include <string>

#include "config_text.hpp"
#include "rowpump/dispatcher/config/config.hpp"

using namespace rowpump;

namespace {

// "FILE:LINE: KEY: problem" of the error parse_config throws, or "" if it loads.
std::string error_of(const std::string& text) {
    try {
        parse_config(text, "test.yaml");
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

const std::string kBound = "must be at most 8760h (365 days), got '";

}  // namespace

TEST_CASE("durations are bounded to what MySQL and Redis take", "[config]") {
    // Found by a config fuzz: accepted, then every claim failed with error 1292 forever.
    CHECK(error_of(with_queue_lines("    lease: 99999999h\n")) ==
          "test.yaml:7: queues.q.lease: " + kBound + "99999999h'");
    CHECK(error_of(with_queue_lines("    lease: 8761h\n")) ==
          "test.yaml:7: queues.q.lease: " + kBound + "8761h'");
    CHECK(parsed(with_queue_lines("    lease: 8760h\n")).queues[0].lease == kMaxDuration);
    CHECK(error_of(with_queue_lines("    reap_interval: 9000h\n")) ==
          "test.yaml:7: queues.q.reap_interval: " + kBound + "9000h'");
    CHECK(error_of(with_queue_lines("    retry: { base: 1s, cap: 100000h }\n")) ==
          "test.yaml:7: queues.q.retry.cap: " + kBound + "100000h'");
    CHECK(error_of(with_queue_lines("    poll: { min: 1s, max: 525601m }\n")) ==
          "test.yaml:7: queues.q.poll.max: " + kBound + "525601m'");
    CHECK(error_of("mysql: { user: u, database: d, connect_timeout: 9999h }\n") ==
          "test.yaml:1: mysql.connect_timeout: " + kBound + "9999h'");
    CHECK(error_of("mysql: { user: u, database: d }\nredis: { connect_timeout: 9999h }\n") ==
          "test.yaml:2: redis.connect_timeout: " + kBound + "9999h'");
    CHECK(error_of(with_queue_lines("    rate: 1/8761h\n")) ==
          "test.yaml:7: queues.q.rate: must have a period of at most 8760h (365 days), got "
          "'1/8761h'");
    CHECK(parsed(with_queue_lines("    rate: 1/8760h\n")).queues[0].rate->per == kMaxDuration);
}

TEST_CASE("the delay a worker may ask for is capped, by default at retry.cap", "[config]") {
    CHECK(parsed(with_queue_lines("")).queues[0].retry.max_delay == Millis(300000));
    CHECK(parsed(with_queue_lines("    retry: { cap: 2m }\n")).queues[0].retry.max_delay ==
          Millis(120000));
    CHECK(parsed(with_queue_lines("    retry: { max_delay: 1h }\n")).queues[0].retry.max_delay ==
          Millis(3600000));
    CHECK(error_of(with_queue_lines("    retry: { max_delay: 0s }\n")) ==
          "test.yaml:7: queues.q.retry.max_delay: must be positive, got '0s'");
    CHECK(error_of(with_queue_lines("    retry: { max_delay: 1000000h }\n")) ==
          "test.yaml:7: queues.q.retry.max_delay: " + kBound + "1000000h'");
}

TEST_CASE("a bookkeeping column may not be a column the queue's SQL uses", "[config]") {
    // Found by a config fuzz: every claim overwrote `done`, which decides what is due.
    CHECK(error_of(kHead + "    table: jobs\n    id: job_id\n    due: \"done = 0\"\n"
                           "    columns: {token: done}\n") ==
          "test.yaml:7: queues.q.columns.token: column 'done' is used by queues.q.due; a "
          "bookkeeping column must be one no SQL of the queue uses");
    CHECK(error_of(with_queue_lines("    on_success: \"Status = 2\"\n"
                                    "    columns:\n      dead: status\n")) ==
          "test.yaml:9: queues.q.columns.dead: column 'status' is used by queues.q.due; a "
          "bookkeeping column must be one no SQL of the queue uses");
    CHECK(error_of(with_queue_lines("    order_by: prio\n    columns: {lease: PRIO}\n")) ==
          "test.yaml:8: queues.q.columns.lease: column 'PRIO' is used by queues.q.order_by; a "
          "bookkeeping column must be one no SQL of the queue uses");
    CHECK(error_of(with_queue_lines("    on_dead: \"`gave_up` = 1\"\n"
                                    "    columns: {error: gave_up}\n")) ==
          "test.yaml:8: queues.q.columns.error: column 'gave_up' is used by queues.q.on_dead; a "
          "bookkeeping column must be one no SQL of the queue uses");
    // The defaults are bookkeeping columns too: the error points at the SQL.
    CHECK(error_of(with_queue_lines("    on_success: \"status = :s, rp_lease_until = NULL\"\n")) ==
          "test.yaml:7: queues.q.on_success: uses the bookkeeping column 'rp_lease_until' "
          "(queues.q.columns.lease, its default); name a column of your own, or give that "
          "bookkeeping column another name");
    // Function names, literals and @variables are not columns.
    CHECK(error_of(with_queue_lines("    on_success: \"t = NOW(3), n = 'done', @x := 1\"\n"
                                    "    columns: {token: now, lease: done, attempts: x}\n"))
              .empty());
}

TEST_CASE("a loaded config still says where each key of a queue was", "[config]") {
    const auto config =
        parsed(with_queue_lines("    on_success: \"status = :s\"\n"
                                "    columns:\n      token: tok\n"));
    const auto& q = config.queues[0];
    CHECK(config.where(q, "due") == "test.yaml:6: queues.q.due");
    CHECK(config.where(q, "on_success") == "test.yaml:7: queues.q.on_success");
    CHECK(config.where(q, "columns.token") == "test.yaml:9: queues.q.columns.token");
    // A key left out: the queue's own line.
    CHECK(config.where(q, "on_dead") == "test.yaml:4: queues.q.on_dead");
}

TEST_CASE("YAML that yaml-cpp would never finish parsing is an error", "[config]") {
    // Found by the config fuzzer: yaml-cpp 0.7 allocates without end on a ',' where a
    // top-level node starts.
    CHECK(error_of(", a") == "test.yaml:1: invalid YAML: cannot be parsed past this point");
    CHECK(error_of("# comment\n,") ==
          "test.yaml:2: invalid YAML: cannot be parsed past this point");
    CHECK(error_of("- a\n,") == "test.yaml:2: invalid YAML: cannot be parsed past this point");
    CHECK(error_of("a: 1\n---\n,") ==
          "test.yaml:3: invalid YAML: cannot be parsed past this point");
}

TEST_CASE("group_by and concurrency_per_key: read, and refused where they cannot work yet",
          "[config][group_by]") {
    const auto config =
        parsed(with_queue_lines("    order_by: run_at\n    group_by: tenant_id\n"
                                "    concurrency_per_key: 5\n"));
    CHECK(config.queues[0].group_by == "tenant_id");
    CHECK(config.queues[0].concurrency_per_key == 5);
    CHECK(parsed(with_queue_lines("")).queues[0].group_by.empty());
    CHECK(error_of(with_queue_lines("    concurrency_per_key: 5\n")) ==
          "test.yaml:7: queues.q.concurrency_per_key: needs group_by: the column that names a "
          "row's key");
    CHECK(error_of(with_queue_lines("    group_by: tenant_id\n    concurrency_per_key: 0\n"))
              .rfind("test.yaml:8: queues.q.concurrency_per_key: ", 0) == 0);
    CHECK(error_of(with_queue_lines("    group_by: \"tenant; DROP\"\n"))
              .rfind("test.yaml:7: queues.q.group_by: ", 0) == 0);
    CHECK(error_of(with_queue_lines("    group_by: tenant_id\n    claim: redis\n")) ==
          "test.yaml:7: queues.q.group_by: does not work with claim: redis yet; use claim: mysql");
    CHECK(error_of(with_queue_lines("    order_by: run_at\n    group_by: run_at\n")) ==
          "test.yaml:8: queues.q.group_by: must not be an order_by column");
    CHECK(error_of(with_queue_lines("    group_by: rp_token\n")).find("bookkeeping column") !=
          std::string::npos);
}

TEST_CASE("rate_per_key: read with group_by, checked like rate", "[config][group_by]") {
    const auto config =
        parsed(with_queue_lines("    group_by: tenant_id\n    rate_per_key: 10/1s\n"));
    REQUIRE(config.queues[0].rate_per_key);
    CHECK(config.queues[0].rate_per_key->count == 10);
    CHECK(config.queues[0].rate_per_key->per == Millis(1000));
    CHECK(!parsed(with_queue_lines("    group_by: tenant_id\n")).queues[0].rate_per_key);
    CHECK(error_of(with_queue_lines("    rate_per_key: 10/1s\n")) ==
          "test.yaml:7: queues.q.rate_per_key: needs group_by: the column that names a row's "
          "key");
    CHECK(error_of(with_queue_lines("    group_by: tenant_id\n    rate_per_key: fast\n")) ==
          "test.yaml:8: queues.q.rate_per_key: must be a rate like 1/3s, 500/1s or 10/s, got "
          "'fast'");
    CHECK(error_of(with_queue_lines("    group_by: tenant_id\n    rate_per_key: 0/1s\n")) ==
          "test.yaml:8: queues.q.rate_per_key: must allow at least 1 dispatch per period, got "
          "'0/1s'");
}
