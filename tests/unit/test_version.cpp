// The worker SDK reports the project's version (project(VERSION) in CMakeLists.txt; the
// cmake test in tests/version/ compares it with the dispatcher, the packages and
// CHANGELOG.md) and the protocol version defined once in common/.

#include <catch2/catch.hpp>

#include <string>

#include "rowpump/common/protocol/protocol_version.hpp"
#include "rowpump/worker.hpp"

TEST_CASE("the worker SDK reports the project's version and its protocol version", "[version]") {
    CHECK(std::string(rowpump::version()) == ROWPUMP_PROJECT_VERSION);
    CHECK(rowpump::protocol_version() == rowpump::protocol::kProtocolVersion);
}
