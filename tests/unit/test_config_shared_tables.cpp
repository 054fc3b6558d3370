// Queues on one table need bookkeeping columns of their own (config_shared_tables.cpp).

#include <string>

#include <catch2/catch.hpp>

#include "rowpump/dispatcher/config/config.hpp"

using namespace rowpump;

namespace {

const std::string kHead =
    "mysql: { user: u, database: app }\n"
    "queues:\n";

std::string queue(const std::string& name, const std::string& table, const std::string& more = "") {
    return "  " + name + ":\n    table: " + table + "\n    id: id\n    due: \"1\"\n" + more;
}

std::string error_of(const std::string& text) {
    try {
        parse_config(text, "t.yaml");
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("two queues on one table with the same columns are refused at the later one",
          "[config]") {
    CHECK(error_of(kHead + queue("a", "jobs") + queue("b", "jobs")) ==
          "t.yaml:8: queues.b.table: queue 'a' uses the table 'jobs' too, with the token "
          "'rp_token' column: queues on one table need bookkeeping columns of their own (give "
          "this queue `columns:` with other names, e.g. { token: rp2_token, lease: "
          "rp2_lease_until, attempts: rp2_attempts, error: rp2_last_error, dead: rp2_dead_at, "
          "lease_index: rp2_lease_idx }, and run `rowpump migrate`), or their claims, outcomes "
          "and dead rows mix");
    // One shared name is enough, in any role, in any letter case; reported at `columns`.
    CHECK(error_of(kHead + queue("a", "jobs") +
                   queue("b", "JOBS",
                         "    columns: { token: b_token, lease: b_lease, attempts: b_attempts, "
                         "error: b_error, dead: RP_DEAD_AT, lease_index: b_idx }\n"))
              .find("t.yaml:11: queues.b.columns: queue 'a' uses the table 'jobs' too, with the "
                    "dead 'RP_DEAD_AT' column") == 0);
}

TEST_CASE("queues on one table with columns of their own, or on other tables, are accepted",
          "[config]") {
    CHECK(error_of(kHead + queue("a", "jobs") +
                   queue("b", "jobs",
                         "    columns: { token: b_token, lease: b_lease, attempts: b_attempts, "
                         "error: b_error, dead: b_dead, lease_index: b_idx }\n")) == "");
    CHECK(error_of(kHead + queue("a", "jobs") + queue("b", "other_jobs")) == "");
    // Shards on other servers hold other tables of the same name.
    CHECK(error_of(kHead + queue("a", "jobs") +
                   queue("b", "jobs",
                         "    shards:\n      - name: far\n        mysql: { host: db2 }\n")) == "");
}
