#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "outcome_check.hpp"
#include "rowpump/common/protocol/protocol.hpp"
#include "serve_loop.hpp"

using namespace rowpump;
using namespace rowpump::details;

namespace {

Task task_42() {
    std::string error;
    auto task = protocol::parse_ready("42:0123456789ABCDEF-1-2A", error);
    REQUIRE(task);
    return *task;
}

}  // namespace

TEST_CASE("declared values follow the meta hash and check successes only", "[worker]") {
    DeclaredValues declared("q");
    CHECK(declared.problem(Outcome::success()).empty());
    CHECK(declared.problem(Outcome::success({{"status", "1"}})) ==
          "queue 'q': undeclared value 'status' (queue declares: none)");

    declared.update("status,note");
    CHECK(declared.problem(Outcome::success({{"status", "1"}, {"note", ""}})).empty());
    CHECK(declared.problem(Outcome::success({{"status", "1"}})) ==
          "queue 'q': value 'note' is missing (on_success uses :note; queue declares: status, "
          "note)");
    CHECK(declared.problem(Outcome::retry("later")).empty());
    CHECK(declared.problem(Outcome::fail("broken")).empty());

    declared.update("");
    CHECK(declared.problem(Outcome::success()).empty());
}

TEST_CASE("an outcome becomes the done message of its task", "[worker]") {
    const auto task = task_42();
    CHECK(done_message(task, Outcome::success({{"status", "a b"}})) ==
          task.message + " ok status=a%20b");
    CHECK(done_message(task, Outcome::retry("slow", std::chrono::milliseconds{1500})) ==
          task.message + " retry reason=slow delay=1500ms");
    // A negative delay means "now".
    CHECK(done_message(task, Outcome::retry("x", std::chrono::milliseconds{-5})) ==
          task.message + " retry reason=x delay=0ms");
    // A reason is clipped to what the dispatcher stores; values are not, so they can overflow.
    auto long_reason = done_message(task, Outcome::fail(std::string(5000, 'r')));
    CHECK(long_reason.size() < 1100);
    CHECK_THROWS_WITH(done_message(task, Outcome::success({{"v", std::string(70000, 'v')}})),
                      Catch::Contains("task '42'") && Catch::Contains("at most 65536"));
}

TEST_CASE("run() reports an outcome it cannot send as a retry naming the problem", "[worker]") {
    const auto task = task_42();
    DeclaredValues declared("q");
    declared.update("status");
    const auto took = std::chrono::microseconds(1500);
    CHECK(checked_done_message(task, Outcome::success({{"status", "1"}}), declared, took) ==
          task.message + " ok status=1 ms=1");
    auto undeclared =
        checked_done_message(task, Outcome::success({{"other", "1"}}), declared, took);
    CHECK(undeclared.rfind(task.message + " retry reason=queue%20%27q%27%3A%20undeclared", 0) == 0);
    CHECK(undeclared.find(" ms=1") != std::string::npos);
    auto too_long = checked_done_message(
        task, Outcome::success({{"status", std::string(70000, 's')}}), declared, took);
    CHECK(too_long.rfind(task.message + " retry reason=the%20outcome%20of%20task", 0) == 0);
}

TEST_CASE("a handler that throws gives a retry", "[worker]") {
    const auto task = task_42();
    auto ok = run_handler([](const Task&) { return Outcome::fail("no"); }, task);
    CHECK(ok.kind() == Verb::fail);
    auto thrown = run_handler(
        [](const Task&) -> Outcome { throw std::runtime_error("upstream down"); }, task);
    CHECK(thrown.kind() == Verb::retry);
    CHECK(thrown.reason() == "upstream down");
    auto odd = run_handler([](const Task&) -> Outcome { throw 7; }, task);
    CHECK(odd.kind() == Verb::retry);
    CHECK(odd.reason() == "the handler threw an exception that is not a std::exception");
}
