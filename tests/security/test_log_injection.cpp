// Text from outside cannot forge log lines: a refused request's path is escaped, and a flood
// of refused requests costs a line a second.

#include <catch2/catch.hpp>

#include <sstream>

#include "http_system.hpp"
#include "raw_http.hpp"
#include "rowpump/testing/eventually.hpp"

using namespace rowpump::testing;

namespace {

// Lines of the log that start with `text`.
int lines_starting(const std::string& log, const std::string& text) {
    std::istringstream in(log);
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line.rfind(text, 0) == 0;
    return n;
}

}  // namespace

TEST_CASE("a refused request cannot forge log lines (%0A, %0D%0A<0>)", "[security]") {
    HttpSystem sys(e2e_queue(), 0);
    sys.start();
    // Without the token: refused, and the URL-decoded path is logged.
    const auto refused = raw_request(
        sys.port,
        "POST /api/queues/users%0Aforged%20line%0D%0A%3C0%3Eforged%20emergency/pause HTTP/1.1\r\n"
        "Host: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    CHECK(status_of(refused) == 401);
    REQUIRE(eventually(10s, [&] { return sys.dispatcher->log_count("http: refused") >= 1; }));
    const auto log = sys.dispatcher->log();
    INFO(log);
    CHECK(lines_starting(log, "forged") == 0);
    CHECK(lines_starting(log, "<0>") == 0);
    CHECK(contains(log, "users\\nforged line\\r\\n<0>forged emergency/pause"));
}

TEST_CASE("a flood of refused requests is logged once a second with a count", "[security]") {
    HttpSystem sys(e2e_queue(), 0);
    sys.start();
    const auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < 200; ++i)
        CHECK(status_of(get_with_host(sys.port, "/api/state", "attacker.example")) == 421);
    // The first refused request of a later second carries the count of those left out: keep
    // knocking until that line appears.
    REQUIRE(eventually(
        10s,
        [&] {
            CHECK(status_of(get_with_host(sys.port, "/api/state", "attacker.example")) == 421);
            return sys.dispatcher->log_count("more refused request(s) not logged") >= 1;
        },
        200ms));
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started)
            .count();
    const auto logged = sys.dispatcher->log_count("http: refused");
    INFO(sys.dispatcher->log_tail());
    CHECK(logged <= static_cast<std::size_t>(seconds) + 3);
}
