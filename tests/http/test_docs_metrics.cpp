// docs/operations.md against a running dispatcher: every metric family GET /metrics serves is
// in the table of "Metrics", and every one in the table is served; every counter
// `rowpump status --json` prints is in the `counters` row of "rowpump status --json".
// (Config keys and the command line: tests/unit/test_docs_drift.cpp.)

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <regex>
#include <set>
#include <sstream>

#include "http_system.hpp"
#include "rowpump/testing/eventually.hpp"

using namespace rowpump::testing;

namespace {

// The text of docs/operations.md from `heading` to the next heading.
std::string operations_section(const std::string& heading) {
    const auto text = read_file(std::string(ROWPUMP_SOURCE_DIR) + "/docs/operations.md");
    const auto start = text.find("\n" + heading + "\n");
    if (start == std::string::npos) return "";
    const auto end = text.find("\n#", start + heading.size() + 1);
    return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The metric names in the first column of the Metrics table: `rowpump_x_total`, `_y_total`
// (short for rowpump_y_total), `rowpump_connected{server=...}`.
std::set<std::string> documented_metrics() {
    std::set<std::string> names;
    std::istringstream lines(operations_section("### Metrics: `GET /metrics`"));
    const std::regex name(R"(`(rowpump)?(_[a-z_]+)[^`]*`)");
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("| `", 0) != 0) continue;
        const auto first_cell = line.substr(0, line.find(" | ", 2));
        for (std::sregex_iterator it(first_cell.begin(), first_cell.end(), name), end; it != end;
             ++it) {
            names.insert("rowpump" + (*it)[2].str());
        }
    }
    return names;
}

// The families a scrape declares (# TYPE lines).
std::set<std::string> served_metrics(const std::string& text) {
    std::set<std::string> names;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("# TYPE ", 0) == 0) names.insert(line.substr(7, line.find(' ', 7) - 7));
    }
    return names;
}

}  // namespace

TEST_CASE("docs: docs/operations.md lists every metric /metrics serves and every status counter",
          "[http][docs]") {
    HttpSystem sys(queue_with_latency(), 20, fast_due_count());
    sys.start();
    REQUIRE(eventually(10s, [&] { return sys.metric("rowpump_dispatched_total") == 20; }));
    const auto scrape = sys.get("/metrics");
    REQUIRE(scrape.status == 200);

    const auto documented = documented_metrics();
    const auto served = served_metrics(scrape.body);
    REQUIRE(served.size() > 15);
    for (const auto& name : served) {
        INFO("/metrics serves " << name);
        CHECK(documented.count(name) == 1);
    }
    for (const auto& name : documented) {
        INFO("docs/operations.md lists " << name);
        CHECK(served.count(name) == 1);
    }

    const auto status = rowpump_cli({"status", "-c", sys.config, "--json"});
    INFO(status.describe());
    REQUIRE(status.status.success());
    const auto line = status.out.substr(0, status.out.find('\n'));
    const auto counters = nlohmann::json::parse(line).at("counters");
    std::string row;
    std::istringstream table(operations_section("### `rowpump status --json`"));
    for (std::string l; std::getline(table, l);) {
        if (l.rfind("| `counters` |", 0) == 0) row = l;
    }
    REQUIRE(!row.empty());
    REQUIRE(counters.size() >= 9);
    for (const auto& [name, value] : counters.items()) {
        INFO("status --json counts " << name << "; the docs' row: " << row);
        CHECK(std::regex_search(row, std::regex("[ :,]" + name + "[,; |]")));
    }
}
