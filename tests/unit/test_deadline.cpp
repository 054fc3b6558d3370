#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <string>

#include "deadline.hpp"
#include "rowpump/common/protocol/protocol.hpp"

using namespace rowpump;
using namespace rowpump::details;
using namespace std::chrono_literals;

namespace {

Task task_with(const std::string& fields) {
    std::string error;
    auto task = protocol::parse_ready("42:0123456789ABCDEF-1-2A" + fields, error);
    INFO(error);
    REQUIRE(task);
    return *task;
}

}  // namespace

TEST_CASE("a task's deadline: its timeout_ms field, else the worker's timeout", "[worker]") {
    std::string problem;
    CHECK(task_deadline(task_with(""), 0ms, problem) == std::nullopt);
    CHECK(task_deadline(task_with(""), 500ms, problem) == 500ms);
    CHECK(task_deadline(task_with(" timeout_ms=20"), 0ms, problem) == 20ms);
    CHECK(task_deadline(task_with(" timeout_ms=20"), 500ms, problem) == 20ms);
    CHECK(task_deadline(task_with(" other=1"), 500ms, problem) == 500ms);
    CHECK(problem.empty());
    CHECK(task_deadline(task_with(" timeout_ms=2147483648"), 0ms, problem) == 2147483648ms);

    for (const char* bad :
         {" timeout_ms", " timeout_ms=", " timeout_ms=0", " timeout_ms=-5", " timeout_ms=1.5",
          " timeout_ms=2147483649", " timeout_ms=99999999999"}) {
        INFO(bad);
        CHECK(task_deadline(task_with(bad), 500ms, problem) == 500ms);
        CHECK(problem == "ignored timeout_ms (not a positive number of milliseconds up to 2^31)");
    }
}

TEST_CASE("a handler thread returns the outcome, or nothing past the deadline", "[worker]") {
    HandlerThread thread;
    auto ok = thread.run([] { return Outcome::fail("done"); }, 10s);
    REQUIRE(ok);
    CHECK(ok->reason() == "done");
    CHECK_FALSE(thread.abandoned());
    // The same thread takes the next call.
    auto again = thread.run([] { return Outcome::success(); }, 10s);
    REQUIRE(again);
    CHECK(again->kind() == Outcome::Kind::success);

    // A call that waits until the test lets it go: past its deadline run() gives up on it,
    // and the call ends later on its own, after the HandlerThread is gone.
    std::promise<void> release;
    std::promise<void> ended;
    auto released = release.get_future().share();
    {
        HandlerThread stuck;
        auto late = stuck.run(
            [&] {
                released.wait();
                ended.set_value();
                return Outcome::success();
            },
            20ms);
        CHECK_FALSE(late);
        CHECK(stuck.abandoned());
    }
    release.set_value();
    CHECK(ended.get_future().wait_for(10s) == std::future_status::ready);
}
