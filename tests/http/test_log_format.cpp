// The log's shapes: --log-format json (one object per line), and text with syslog priorities
// and no timestamp of its own when stderr is the journal's stream (JOURNAL_STREAM).

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "http_system.hpp"
#include "rowpump/testing/eventually.hpp"

using namespace rowpump::testing;

namespace {

std::string read_all(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// `rowpump run` with `args` added, its stderr to `log`, until it took the leader lock.
void run_until_leading(const std::string& config, const std::string& log,
                       std::vector<std::string> args,
                       std::vector<std::pair<std::string, std::string>> env = {}) {
    std::vector<std::string> argv{rowpump_exe(), "run", "-c", config};
    argv.insert(argv.end(), args.begin(), args.end());
    SpawnOptions options = log_to(log);
    options.env = std::move(env);
    ChildProcess dispatcher(argv, options);
    REQUIRE(eventually(15s, [&] { return contains(read_all(log), "took the leader lock"); }));
    CHECK(dispatcher.stop(10s).success());
}

// A migrated table and its config.
std::string migrated_config(TestBed& bed) {
    auto db = bed.db();
    create_e2e_table(db);
    const auto config = bed.write_config({e2e_queue()});
    migrate_apply(config);
    return config;
}

}  // namespace

TEST_CASE("log format json (--log-format) writes one object per line", "[log]") {
    TestBed bed;
    const auto config = migrated_config(bed);
    const auto log = bed.dir.file("json.log");
    run_until_leading(config, log, {"--log-format", "json"});
    std::istringstream lines(read_all(log));
    std::string line;
    bool leader_line = false;
    while (std::getline(lines, line)) {
        INFO(line);
        const auto o = nlohmann::json::parse(line);
        CHECK(o["time"].is_string());
        CHECK(o["level"].is_string());
        CHECK(o.contains("queue"));
        CHECK(o["event"].is_string());
        CHECK(o["fields"].is_object());
        if (o["event"].get<std::string>().rfind("took the leader lock as ", 0) == 0) {
            leader_line = true;
            CHECK(o["queue"] == "users");
            CHECK(o["level"] == "info");
        }
    }
    CHECK(leader_line);
}

TEST_CASE("under systemd, text lines carry syslog priorities and no timestamp", "[log]") {
    TestBed bed;
    const auto config = migrated_config(bed);
    const auto log = bed.dir.file("journal.log");
    write_file(log, "");
    struct stat st {};
    REQUIRE(stat(log.c_str(), &st) == 0);
    const auto stream = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    run_until_leading(config, log, {}, {{"JOURNAL_STREAM", stream}});
    const auto text = read_all(log);
    INFO(text);
    CHECK(contains(text, "<6>queue users: took the leader lock as "));
    CHECK(contains(text, "<6>rowpump dispatcher starting: 1 queue(s)"));
    CHECK_FALSE(contains(text, " info "));
}
