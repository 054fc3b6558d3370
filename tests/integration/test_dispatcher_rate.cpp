// `rate` is a strict minimum interval between dispatches. The times come from Redis itself:
// MONITOR stamps every command with the server's clock when it arrives.

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/queue_redis.hpp"
#include "support/seed.hpp"
#include "support/test_bed.hpp"

using namespace rowpump::test;

namespace {

// One MONITOR line: `1700000000.123456 [0 127.0.0.1:51234] "RPUSH" "key" "value"`.
struct MonitorLine {
    std::int64_t micros = 0;  // server time
    std::string source;       // "0 127.0.0.1:51234", or "0 lua" inside scripts
    std::vector<std::string> args;
};

std::optional<std::string> parse_quoted(const std::string& text, std::size_t& pos) {
    if (pos >= text.size() || text[pos] != '"') return std::nullopt;
    std::string out;
    for (++pos; pos < text.size(); ++pos) {
        char c = text[pos];
        if (c == '"') {
            ++pos;
            return out;
        }
        if (c != '\\' || pos + 1 >= text.size()) {
            out += c;
            continue;
        }
        char e = text[++pos];
        if (e == 'x' && pos + 2 < text.size()) {
            out += static_cast<char>(std::stoi(text.substr(pos + 1, 2), nullptr, 16));
            pos += 2;
        } else {
            out += e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
        }
    }
    return std::nullopt;
}

std::optional<MonitorLine> parse_monitor_line(const std::string& text) {
    MonitorLine line;
    std::size_t dot = text.find('.');
    std::size_t open = text.find(" [");
    std::size_t close = text.find("] ");
    if (dot == std::string::npos || open == std::string::npos || close == std::string::npos ||
        dot > open || open > close) {
        return std::nullopt;
    }
    line.micros = std::stoll(text.substr(0, dot)) * 1000000 +
                  std::stoll(text.substr(dot + 1, open - dot - 1));
    line.source = text.substr(open + 2, close - open - 2);
    std::size_t pos = close + 2;
    while (pos < text.size()) {
        std::optional<std::string> arg = parse_quoted(text, pos);
        if (!arg) return std::nullopt;
        line.args.push_back(std::move(*arg));
        ++pos;  // the space between arguments
    }
    return line;
}

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
    return s;
}

}  // namespace

TEST_CASE("a queue with rate 1/200ms never dispatches two rows closer than 200 ms",
          "[dispatcher]") {
    constexpr std::size_t kRows = 12;
    TestBed bed;
    MysqlClient db = bed.db();
    seed_user_block_status(db, kRows);
    QueueSpec queue;
    queue.name = "paced";
    queue.batch = 1;
    queue.rate = "1/200ms";
    std::string config = bed.write_config({queue});
    migrate_apply(config);

    rowpump::redis::Connection monitor = bed.redis_client();
    monitor.set_timeout(10s);  // no command at all for 10 s would itself be a failure
    REQUIRE(monitor.command({"MONITOR"}).string() == "OK");
    auto dispatcher = bed.start_dispatcher(config);

    // Every message pushed by a client (scripts' own RPUSHes, "lua", are re-queues, not
    // dispatches), stamped with the server time of its RPUSH.
    const std::string key = ready_key("paced");
    std::vector<std::int64_t> stamps;
    std::vector<std::string> pushed;
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (stamps.size() < kRows && std::chrono::steady_clock::now() < deadline) {
        std::string text = monitor.read_reply().string();
        std::optional<MonitorLine> line = parse_monitor_line(text);
        INFO("MONITOR line: " << text);
        REQUIRE(line);
        if (line->args.size() < 3 || upper(line->args[0]) != "RPUSH" || line->args[1] != key ||
            line->source.find("lua") != std::string::npos) {
            continue;
        }
        for (std::size_t i = 2; i < line->args.size(); ++i) {
            stamps.push_back(line->micros);
            pushed.push_back(line->args[i]);
        }
    }
    REQUIRE(stamps.size() == kRows);

    std::int64_t min_gap = INT64_MAX, max_gap = 0;
    for (std::size_t i = 1; i < stamps.size(); ++i) {
        min_gap = std::min(min_gap, stamps[i] - stamps[i - 1]);
        max_gap = std::max(max_gap, stamps[i] - stamps[i - 1]);
    }
    INFO("gaps between dispatches: min " << min_gap << " us, max " << max_gap << " us");
    CHECK(min_gap >= 200000);
    CHECK(max_gap < 1000000);  // paced by the rate, not stalled by idle back-off
    std::vector<rowpump::protocol::Task> tasks = parse_ready_all(pushed);
    std::set<std::string> ids;
    for (const auto& t : tasks) ids.insert(t.id);
    CHECK(ids.size() == kRows);

    dispatcher->signal(SIGTERM);
    std::optional<ExitStatus> status = dispatcher->wait(5s);
    REQUIRE(status);
    CHECK(status->describe() == "exit code 0");
}
