#include <catch2/catch.hpp>

#include "rowpump/common/protocol/queue_gauges.hpp"

using namespace rowpump::protocol;

// rowpump:{q}:dispatchers is written by dispatchers, and by anyone else who may write it: an
// entry without an id, with another role or without a time is not a dispatcher.
TEST_CASE("parse_dispatchers keeps only entries a dispatcher writes", "[protocol]") {
    const auto entries = parse_dispatchers({"host:1", "leader 1700000000000",   //
                                            "host:2", "standby 1700000000100",  //
                                            "", "leader 1700000000000",         //
                                            "host:3", "boss 1700000000000",     //
                                            "host:4", " 1700000000000",         //
                                            "host:5", "standby",                //
                                            "host:6", "standby soon"});
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].id == "host:1");
    CHECK(entries[0].role == "leader");
    CHECK(entries[0].at_ms == 1700000000000);
    CHECK(entries[1].id == "host:2");
    CHECK(entries[1].role == "standby");
}
