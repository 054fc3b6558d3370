#include <catch2/catch.hpp>

#include "rowpump/dispatcher/loop/in_flight.hpp"

using rowpump::ClaimedRow;
using rowpump::InFlight;
using rowpump::Task;

namespace {

const std::string kTokenA = "00000000000000A1-1-7", kTokenB = "00000000000000B2-2-7";

Task task(const std::string& id, const std::string& token) {
    Task task;
    task.id = id;
    task.token = token;
    return task;
}

}  // namespace

TEST_CASE("InFlight is unknown until loaded, and learns ready and done messages", "[in_flight]") {
    InFlight in_flight;
    CHECK(!in_flight.known());
    in_flight.load({"7:" + kTokenA, "not a message", "a%20b:" + kTokenB});
    CHECK(in_flight.known());
    CHECK(in_flight.size() == 2);
    CHECK(in_flight.holds("7"));
    CHECK(in_flight.holds("a b"));  // ids are percent-decoded
    in_flight.forget();
    CHECK(!in_flight.known());
    CHECK(in_flight.size() == 0);
}

TEST_CASE("InFlight: an outcome of another task of the row is stale; finishing needs the token",
          "[in_flight]") {
    InFlight in_flight;
    in_flight.load({});
    in_flight.add({ClaimedRow{"7", kTokenB}});
    CHECK(in_flight.stale(task("7", kTokenA)));
    CHECK(!in_flight.stale(task("7", kTokenB)));
    CHECK(!in_flight.stale(task("8", kTokenA)));  // unknown rows: the row's fence decides

    in_flight.finished(task("7", kTokenA));
    CHECK(in_flight.holds("7"));
    in_flight.finished(task("7", kTokenB));
    CHECK(!in_flight.holds("7"));
}

TEST_CASE("InFlight keeps only what Redis still holds, and what waits to be applied",
          "[in_flight]") {
    InFlight in_flight;
    in_flight.load({"1:" + kTokenA, "2:" + kTokenA, "3:" + kTokenA});
    const auto messages = in_flight.messages();
    CHECK(messages.size() == 3);
    CHECK(in_flight.keep_only({"2:" + kTokenA}, {task("3", kTokenA)}) == 1);
    CHECK(!in_flight.holds("1"));
    CHECK(in_flight.holds("2"));
    CHECK(in_flight.holds("3"));
}
