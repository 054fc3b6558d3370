#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "fetcher.hpp"
#include "reporter.hpp"
#include "worker_log.hpp"

using namespace rowpump;
using namespace rowpump::details;
using std::chrono::milliseconds;

namespace {

Report report(const std::string& id) {
    Task task;
    task.id = id;
    task.token = "0123456789ABCDEF-1-2A";
    return {task, id + ":" + task.token + " ok"};
}

}  // namespace

TEST_CASE("a batch of reports is one call of the complete script", "[worker]") {
    std::vector<Report> reports{report("1"), report("2")};
    CHECK(report_args(reports) ==
          std::vector<std::string>{"1:0123456789ABCDEF-1-2A", "1:0123456789ABCDEF-1-2A ok",
                                   "2:0123456789ABCDEF-1-2A", "2:0123456789ABCDEF-1-2A ok"});
}

TEST_CASE("refused reports are logged with the tasks they were about", "[worker]") {
    const std::vector<Report> one{report("7")};
    const std::vector<Report> three{report("1"), report("2"), report("3")};
    CHECK(tasks_text(one) == "task '7'");
    CHECK(tasks_text(three) == "3 tasks ('1', ...)");
    CHECK(refused_text(one, 1).empty());
    CHECK(refused_text(one, 0) ==
          "the report on task '7' came too late: the task had been taken back from this worker");
    CHECK(refused_text(three, 3).empty());
    CHECK(refused_text(three, 1) ==
          "the reports on 2 of 3 tasks ('1', ...) came too late: the "
          "tasks had been taken back from this worker");
}

TEST_CASE("a fetch blocks in Redis for less than the heartbeat has left", "[worker]") {
    CHECK(seconds_text(milliseconds{1500}) == "1.500");
    CHECK(seconds_text(milliseconds{20}) == "0.020");
    CHECK(longest_block(milliseconds{10000}, milliseconds{3333}) == milliseconds{3333});
    CHECK(longest_block(milliseconds{200}, milliseconds{190}) == milliseconds{10});
}

TEST_CASE("an outage is logged when it starts and when it ends", "[worker]") {
    std::vector<std::string> lines;
    WorkerLog log([&](const std::string& line) { lines.push_back(line); }, "w1");
    log.redis_ok();
    log.redis_failed(std::runtime_error("refused"));
    log.redis_failed(std::runtime_error("refused again"));
    log.redis_ok();
    log.redis_ok();
    CHECK(lines == std::vector<std::string>{"redis unavailable (refused); retrying",
                                            "redis reachable again"});
    // A logger that throws does not take the worker down.
    WorkerLog failing([](const std::string&) { throw std::runtime_error("disk full"); }, "w1");
    CHECK_NOTHROW(failing.line("x"));
}
