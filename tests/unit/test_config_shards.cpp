// A queue's `shards:`: the MySQL sources of one queue, and the per-shard configs the
// dispatcher and the commands work from.

#include <catch2/catch.hpp>

#include <string>

#include "config_text.hpp"
#include "rowpump/dispatcher/config/config.hpp"

using namespace rowpump;

namespace {

// The queue of config_text.hpp with these lines under `shards:` (the first on line 8).
std::string with_shards(const std::string& lines) {
    return with_queue_lines("    shards:\n" + lines);
}

const std::string kTwoShards =
    "      - name: eu\n"
    "        mysql: { host: db-eu, password: pw }\n"
    "      - name: us\n"
    "        mysql: { port: 3307, user: other, database: app_us }\n"
    "        table: jobs_us\n";

std::string error_of(const std::string& text) {
    try {
        parse_config(text, "test.yaml");
    } catch (const ConfigError& e) {
        return e.what();
    }
    FAIL("loaded without an error:\n" << text);
    return "";
}

}  // namespace

TEST_CASE("a shard's mysql keys override the top-level mysql, its table the queue's",
          "[config][shards]") {
    const auto config = parsed(with_shards(kTwoShards));
    const auto& shards = config.queues.at(0).shards;
    REQUIRE(shards.size() == 2);
    CHECK(shards[0].name == "eu");
    CHECK(shards[0].mysql.host == "db-eu");
    CHECK(shards[0].mysql.port == 3306);
    CHECK(shards[0].mysql.user == "rowpump");
    CHECK(shards[0].mysql.password == "pw");
    CHECK(shards[0].mysql.database == "app");
    CHECK(shards[0].table == "jobs");
    CHECK(shards[1].mysql.host == "127.0.0.1");
    CHECK(shards[1].mysql.port == 3307);
    CHECK(shards[1].mysql.user == "other");
    CHECK(shards[1].mysql.database == "app_us");
    CHECK(shards[1].table == "jobs_us");
}

TEST_CASE("a queue without shards is its own single source", "[config][shards]") {
    const auto config = parsed(with_queue_lines(""));
    const auto sources = queue_sources(config, config.queues[0]);
    REQUIRE(sources.size() == 1);
    CHECK_FALSE(sources[0].queue.shard.has_value());
    CHECK(sources[0].queue.label() == "q");
    CHECK(sources[0].config.mysql.host == config.mysql.host);
    const auto servers = configs_by_server(config);
    REQUIRE(servers.size() == 1);
    CHECK(servers[0].queues.size() == 1);
}

TEST_CASE("each shard is a source with its server, table and position", "[config][shards]") {
    const auto config = parsed(with_shards(kTwoShards));
    const auto sources = queue_sources(config, config.queues[0]);
    REQUIRE(sources.size() == 2);
    CHECK(sources[0].queue.shard == 0u);
    CHECK(sources[0].queue.label() == "q shard eu");
    CHECK(sources[0].config.mysql.host == "db-eu");
    CHECK(sources[1].queue.shard == 1u);
    CHECK(sources[1].queue.table == "jobs_us");
    CHECK(sources[1].config.mysql.port == 3307);
    // Keys stay the queue's: the shards share its ready list.
    CHECK(sources[1].queue.name == "q");
    const auto servers = configs_by_server(config);
    REQUIRE(servers.size() == 2);
    CHECK(servers[1].mysql.database == "app_us");
    REQUIRE(servers[1].queues.size() == 1);
    CHECK(servers[1].queues[0].label() == "q shard us");
}

TEST_CASE("shards are checked as strictly as the rest", "[config][shards]") {
    const std::string not_a_list =
        "test.yaml:7: queues.q.shards: must be a list of shards ({name: ..., mysql: {...}}), got ";
    CHECK(error_of(with_queue_lines("    shards: []\n")) == not_a_list + "a list");
    CHECK(error_of(with_queue_lines("    shards: { eu: {} }\n")) == not_a_list + "a map");
    CHECK(error_of(with_shards("      - mysql: { port: 3307 }\n")) ==
          "test.yaml:8: queues.q.shards[0].name: is required");
    CHECK(error_of(with_shards("      - { name: eu, tabel: x }\n")) ==
          "test.yaml:8: queues.q.shards[0].tabel: unknown key (expected one of: name, mysql, "
          "table)");
    CHECK(error_of(with_shards("      - { name: \"e u\" }\n")) ==
          "test.yaml:8: queues.q.shards[0].name: invalid shard name 'e u' (1 to 64 characters "
          "from A-Z a-z 0-9 _ . -)");
    CHECK(error_of(with_shards("      - { name: eu, mysql: { port: 0 } }\n"))
              .find("test.yaml:8: queues.q.shards[0].mysql.port: ") == 0);
    CHECK(error_of(with_shards("      - { name: eu, mysql: { db: x } }\n"))
              .find("queues.q.shards[0].mysql.db: unknown key") != std::string::npos);
    CHECK(error_of(with_shards("      - { name: eu, table: \"a b\" }\n"))
              .find("queues.q.shards[0].table: ") != std::string::npos);
    CHECK(error_of(with_shards("      - { name: eu, mysql: { port: 3307 } }\n"
                               "      - { name: eu, mysql: { port: 3308 } }\n")) ==
          "test.yaml:9: queues.q.shards[1]: shard name 'eu' is given twice");
    CHECK(error_of(with_shards("      - { name: eu }\n"
                               "      - { name: us, mysql: { user: other } }\n")) ==
          "test.yaml:9: queues.q.shards[1]: shard 'us' has the same server, database and table "
          "(127.0.0.1:3306/app.jobs) as another shard: its rows would be claimed twice");
}
