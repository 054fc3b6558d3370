// README.md's "Your own table in five minutes", run as written: the test reads the section's
// code blocks (the SQL, the YAML config, the migrate/check/run commands and the C++, Python
// and Node.js workers), runs them against a MariaDB and a Redis of its own, and checks that
// every row of the table gets its outcome from each worker. What it changes: the servers'
// ports (the README's 3306 and 6379), and the database `app` is created first.

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "rowpump/testing/test_bed.hpp"

using namespace rowpump::testing;

namespace {

std::string readme_section() {
    std::ifstream in(std::string(ROWPUMP_SOURCE_DIR) + "/README.md");
    std::ostringstream text;
    text << in.rdbuf();
    const auto all = text.str();
    const auto start = all.find("\n## Your own table in five minutes\n");
    if (start == std::string::npos) throw std::runtime_error("README.md: no five-minute section");
    return all.substr(start, all.find("\n## ", start + 1) - start);
}

// The one code block of `language` in `section` (the first that contains `part`).
std::string code_block(const std::string& section, const std::string& language,
                       const std::string& part = "") {
    const std::string fence = "```" + language + "\n";
    for (auto at = section.find(fence); at != std::string::npos; at = section.find(fence, at + 1)) {
        const auto begin = at + fence.size();
        const auto block = section.substr(begin, section.find("```", begin) - begin);
        if (block.find(part) != std::string::npos) return block;
    }
    throw std::runtime_error("README.md: no ```" + language + " block with '" + part + "'");
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

// The statements of an SQL block, split at the ';' that end lines.
std::vector<std::string> statements(const std::string& sql) {
    std::vector<std::string> result;
    std::string current;
    std::istringstream lines(sql);
    for (std::string line; std::getline(lines, line);) {
        current += line + "\n";
        if (!line.empty() && line.back() == ';') {
            result.push_back(current.substr(0, current.size() - 2));
            current.clear();
        }
    }
    return result;
}

std::vector<std::string> lines_of(const std::string& block) {
    std::vector<std::string> result;
    std::istringstream lines(block);
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty()) result.push_back(line);
    }
    return result;
}

}  // namespace

TEST_CASE("readme: the five-minute example runs as written", "[readme]") {
    const auto section = readme_section();
    TestBed bed;
    const auto mysql_port = std::to_string(bed.mysql.port());
    const auto redis_port = std::to_string(bed.redis.port());
    auto ports = [&](const std::string& text) {
        return replace_all(replace_all(text, "3306", mysql_port), "6379", redis_port);
    };

    // The table, its rows and the user, as root in a database `app`.
    const auto sql = code_block(section, "sql", "CREATE TABLE");
    std::smatch password;
    REQUIRE(std::regex_search(sql, password, std::regex("IDENTIFIED BY '([^']*)'")));
    auto root = bed.mysql.connect_root();
    // The test bed's own accounts are named like the README's: make room for the README's.
    for (const char* host : {"127.0.0.1", "::1", "localhost", "%"})
        root.exec(std::string("DROP USER IF EXISTS 'rowpump'@'") + host + "'");
    root.exec("CREATE DATABASE app");
    root.exec("USE app");
    for (const auto& statement : statements(sql)) root.exec(statement);
    auto db = bed.mysql.connect_root();
    db.exec("USE app");
    const auto rows = db.scalar("SELECT COUNT(*) FROM emails");
    REQUIRE(rows >= 1);

    // The config, and the commands run by sh in its directory with `rowpump` on the PATH.
    write_file(bed.dir.file("rowpump.yaml"), ports(code_block(section, "yaml", "queues:")));
    const std::vector<std::pair<std::string, std::string>> env = {
        {"PATH", std::string(ROWPUMP_BIN_DIR) + ":" + std::getenv("PATH")},
        {"ROWPUMP_MYSQL_PASSWORD", password[1]}};
    const auto commands = lines_of(code_block(section, "sh", "rowpump run"));
    REQUIRE(commands.size() == 3);
    std::unique_ptr<ChildProcess> dispatcher;
    for (const auto& command : commands) {
        INFO(command);
        const auto in_dir = "cd '" + bed.dir.path() + "' && exec " + command;
        if (command.find("rowpump run") == 0) {
            auto options = log_to(bed.dir.file("dispatcher.log"));
            options.env = env;
            dispatcher = std::make_unique<ChildProcess>(
                std::vector<std::string>{"sh", "-c", in_dir}, options);
            continue;
        }
        const auto result = run_program({"sh", "-c", in_dir}, 60s, env);
        INFO(result.describe());
        REQUIRE(result.status.success());
    }
    REQUIRE(dispatcher);

    // Each worker sends the rows that are due: the README's own and three more each.
    auto all_sent = [&] {
        return db.scalar(
                   "SELECT COUNT(*) FROM emails WHERE sent_at IS NULL OR receipt IS NULL "
                   "OR receipt <> CONCAT('r-', id)") == 0;
    };
    auto run_worker = [&](const std::string& name, std::vector<std::string> argv,
                          SpawnOptions options = {}) {
        INFO(name << " worker");
        db.exec("INSERT INTO emails (address) VALUES ('" + name + "1@example.com'), ('" + name +
                "2@example.com'), ('" + name + "3@example.com')");
        const auto log = bed.dir.file(name + ".log");
        auto logged = log_to(log);
        logged.env = options.env;
        ChildProcess worker(std::move(argv), logged);
        const bool sent = eventually(60s, all_sent, 50ms);
        worker.stop(5s);
        INFO(file_tail(log) << "\ndispatcher: " << file_tail(bed.dir.file("dispatcher.log")));
        CHECK(sent);
        CHECK(read_file(log).find("sending email") != std::string::npos);
    };

    SECTION("the C++ worker") {
        const auto source = bed.dir.file("worker.cpp");
        write_file(source, ports(code_block(section, "cpp", "rowpump::Worker")));
        const std::string library = ROWPUMP_WORKER_LIBRARY;
        std::vector<std::string> command{ROWPUMP_CXX,
                                         "-std=c++17",
                                         "-I" ROWPUMP_SOURCE_DIR "/worker-sdk/include",
                                         "-I" ROWPUMP_SOURCE_DIR "/common/include",
                                         source,
                                         "-o",
                                         bed.dir.file("worker"),
                                         library,
                                         "-Wl,-rpath," + library.substr(0, library.rfind('/'))};
        if (const std::string sanitize = ROWPUMP_README_SANITIZE; !sanitize.empty())
            command.insert(command.begin() + 1, sanitize);
        const auto compiled = run_program(command, 120s);
        INFO(compiled.describe());
        REQUIRE(compiled.status.success());
        run_worker("cpp", {bed.dir.file("worker")});
    }
    SECTION("the Python worker") {
        const auto source = bed.dir.file("worker.py");
        write_file(source, ports(code_block(section, "python", "rowpump.Worker")));
        SpawnOptions options;
        options.env = {{"PYTHONPATH", ROWPUMP_SOURCE_DIR "/worker-sdk/python"},
                       {"PYTHONDONTWRITEBYTECODE", "1"}};
        run_worker("python", {ROWPUMP_PYTHON3, source}, options);
    }
    SECTION("the Node.js worker") {
        if (std::string(ROWPUMP_NODE).find("NOTFOUND") != std::string::npos) {
            FAIL("node is not installed (scripts/install-deps.sh)");
        }
        const auto source = bed.dir.file("worker.js");
        write_file(source, ports(code_block(section, "js", "rowpump-worker")));
        // require('rowpump-worker') finds the SDK of this checkout, as `npm install` would.
        const auto modules = bed.dir.file("node_modules");
        REQUIRE(run_program({"mkdir", "-p", modules}).status.success());
        REQUIRE(run_program({"ln", "-s", ROWPUMP_SOURCE_DIR "/worker-sdk/node",
                             modules + "/rowpump-worker"})
                    .status.success());
        run_worker("node", {ROWPUMP_NODE, source});
    }
    dispatcher->stop(10s);
}
