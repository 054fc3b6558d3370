#include <catch2/catch.hpp>

#include "rowpump/dispatcher/loop/in_flight.hpp"

using rowpump::ClaimedRow;
using rowpump::InFlight;
using rowpump::Task;
using rowpump::TimePoint;
using std::chrono::seconds;

namespace {

const std::string kTokenA = "00000000000000A1-1-7", kTokenB = "00000000000000B2-2-7";
const TimePoint kStart{};  // a lease of 10 s from here ends at kStart + 10 s

Task task(const std::string& id, const std::string& token) {
    Task task;
    task.id = id;
    task.token = token;
    return task;
}

}  // namespace

TEST_CASE("InFlight is unknown until learned, and learns ready and done messages", "[in_flight]") {
    InFlight in_flight;
    CHECK(!in_flight.known());
    in_flight.learn({"7:" + kTokenA, "not a message", "a%20b:" + kTokenB}, kStart + seconds(10));
    CHECK(in_flight.known());
    CHECK(in_flight.size() == 2);
    CHECK(in_flight.holds("7"));
    CHECK(in_flight.holds("a b"));  // ids are percent-decoded
    in_flight.forget();
    CHECK(!in_flight.known());
    CHECK(in_flight.size() == 0);
}

TEST_CASE("InFlight: only the task it issued is in flight; finishing needs the token",
          "[in_flight]") {
    InFlight in_flight;
    in_flight.learn({}, kStart);
    in_flight.add({ClaimedRow{"7", kTokenB}}, kStart + seconds(10));
    CHECK(!in_flight.issued(task("7", kTokenA)));  // another copy of the row
    CHECK(in_flight.issued(task("7", kTokenB)));
    CHECK(!in_flight.issued(task("8", kTokenA)));  // never issued: a forgery, or its lease ended

    in_flight.finished(task("7", kTokenA));
    CHECK(in_flight.holds("7"));
    in_flight.finished(task("7", kTokenB));
    CHECK(!in_flight.holds("7"));
}

TEST_CASE("InFlight: a task Redis holds replaces another token of its row, and keeps its own",
          "[in_flight]") {
    InFlight in_flight;
    in_flight.add({ClaimedRow{"7", kTokenA}, ClaimedRow{"8", kTokenA}}, kStart + seconds(10));
    in_flight.learn({"7:" + kTokenB, "8:" + kTokenA}, kStart + seconds(20));
    CHECK(in_flight.issued(task("7", kTokenB)));
    CHECK(!in_flight.issued(task("7", kTokenA)));
    CHECK(in_flight.issued(task("8", kTokenA)));
    // Neither is dropped at the first lease end: both were seen held later.
    CHECK(in_flight.audit({}, {}, kStart + seconds(15), kStart + seconds(25)).dropped == 0);
}

TEST_CASE(
    "InFlight renews what Redis holds, and keeps a task in no list until its lease ends; extend "
    "moves the end",
    "[in_flight]") {
    InFlight in_flight;
    in_flight.learn({}, kStart);
    in_flight.add({{"1", kTokenA}, {"2", kTokenA}, {"3", kTokenA}, {"4", kTokenA}},
                  kStart + seconds(10));
    CHECK(in_flight.messages().size() == 4);
    in_flight.extend(task("4", kTokenA), kStart + seconds(30));
    in_flight.extend(task("4", kTokenB), kStart + seconds(60));  // another copy: no effect

    // At 5 s: 2 is held (renewed to 15 s), 3 waits to be applied; 1 and 4 are in no list.
    auto audit = in_flight.audit({"2:" + kTokenA}, {task("3", kTokenA)}, kStart + seconds(5),
                                 kStart + seconds(15));
    CHECK(audit.dropped == 0);
    CHECK(audit.unheld == 2);
    // At 10 s, 1's lease ended; 2's was renewed, 4's extended.
    audit = in_flight.audit({}, {}, kStart + seconds(10), kStart + seconds(20));
    CHECK(audit.dropped == 1);
    CHECK(!in_flight.holds("1"));
    CHECK(in_flight.holds("2"));
    CHECK(in_flight.holds("4"));
    audit = in_flight.audit({}, {}, kStart + seconds(16), kStart + seconds(26));
    CHECK(audit.dropped == 2);  // 2 and 3
    CHECK(in_flight.holds("4"));
    CHECK(in_flight.audit({}, {}, kStart + seconds(30), kStart + seconds(40)).dropped == 1);
    CHECK(in_flight.size() == 0);
}

TEST_CASE("InFlight drops the tasks of a push that did not land", "[in_flight]") {
    InFlight in_flight;
    in_flight.add({{"1", kTokenA}, {"2", kTokenA}}, kStart + seconds(10));
    in_flight.drop_unless_held({"1:" + kTokenA, "2:" + kTokenA}, {"2:" + kTokenA});
    CHECK(!in_flight.holds("1"));
    CHECK(in_flight.holds("2"));
}
