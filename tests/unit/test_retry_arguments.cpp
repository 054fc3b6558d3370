// `rowpump retry` with arguments that do not make sense together exits 2, like every other bad
// argument (docs/operations.md, "Commands"), before it connects to anything.

#include <catch2/catch.hpp>

#include <sstream>

#include "rowpump/dispatcher/cli/commands.hpp"

namespace {

// No server listens on port 1: a command that got as far as connecting would fail with 1.
const char* const kConfig = R"(mysql: { host: 127.0.0.1, port: 1, user: u, database: d }
redis: { host: 127.0.0.1, port: 1 }
queues:
  jobs: { table: jobs, id: id, due: "state = 0" }
)";

int retry(const std::vector<std::string>& ids, bool all, const std::string& set,
          std::string& error) {
    const auto config = rowpump::parse_config(kConfig, "rowpump.yaml");
    std::ostringstream out, err;
    const int code = rowpump::command_retry(config, "jobs", "", ids, all, set, out, err);
    error = err.str();
    return code;
}

}  // namespace

TEST_CASE("retry: neither ids nor --all, or both, exits 2", "[cli]") {
    std::string error;
    CHECK(retry({}, false, "", error) == rowpump::kUsageError);
    CHECK(error == "give either ids or --all\n");
    CHECK(retry({"17"}, true, "", error) == rowpump::kUsageError);
    CHECK(error == "give either ids or --all\n");
}

TEST_CASE("retry: a --set that is not a SET list exits 2", "[cli]") {
    std::string error;
    CHECK(retry({"17"}, false, "state = 0; DROP TABLE jobs", error) == rowpump::kUsageError);
    CHECK(error.rfind("--set: ", 0) == 0);
    CHECK(retry({"17"}, false, "state = :state", error) == rowpump::kUsageError);
    CHECK(error == "--set: must not contain placeholders, found ':state'\n");
}
