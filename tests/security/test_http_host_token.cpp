// DNS rebinding and reads: a request naming a host this endpoint does not serve is refused;
// with http.read_token, queue data needs the token; the page forbids framing and sniffing.

#include <catch2/catch.hpp>

#include "http_system.hpp"
#include "raw_http.hpp"

using namespace rowpump::testing;

TEST_CASE("a request for another host name is refused (DNS rebinding)", "[security]") {
    HttpSystem sys(e2e_queue(), 0, {"  hosts: [dispatcher.internal]"});
    sys.start();
    const std::string local = "127.0.0.1:" + std::to_string(sys.port);
    for (const std::string path : {"/api/state", "/metrics", "/"}) {
        INFO(path);
        CHECK(status_of(get_with_host(sys.port, path,
                                      "attacker.example:" + std::to_string(sys.port))) == 421);
        CHECK(status_of(get_with_host(sys.port, path, local)) == 200);
        CHECK(status_of(get_with_host(sys.port, path, "localhost")) == 200);
        CHECK(status_of(get_with_host(sys.port, path, "Dispatcher.Internal:80")) == 200);
    }
    // Actions too, whatever the token.
    CHECK(
        status_of(raw_request(sys.port,
                              "POST /api/queues/users/pause HTTP/1.1\r\nHost: attacker.example\r\n"
                              "Authorization: Bearer " +
                                  std::string(HttpSystem::kToken) +
                                  "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")) == 421);
}

TEST_CASE("with http.read_token, queue data needs the token, probes do not", "[security]") {
    HttpSystem sys(e2e_queue(), 0, {"  read_token: true"});
    sys.start();
    const std::string host = "127.0.0.1";
    const std::string token = "Authorization: Bearer " + std::string(HttpSystem::kToken) + "\r\n";
    for (const std::string path : {"/api/state", "/metrics"}) {
        INFO(path);
        CHECK(status_of(get_with_host(sys.port, path, host)) == 401);
        CHECK(status_of(get_with_host(sys.port, path, host,
                                      "Authorization: Bearer wrong-token-0123456789\r\n")) == 401);
        CHECK(status_of(get_with_host(sys.port, path, host, token)) == 200);
    }
    CHECK(status_of(get_with_host(sys.port, "/healthz", host)) == 200);
    CHECK(status_of(get_with_host(sys.port, "/readyz", host)) == 200);
    CHECK(status_of(get_with_host(sys.port, "/", host)) == 200);  // the page holds no data
}

TEST_CASE("the dashboard page forbids framing, sniffing and other origins", "[security]") {
    HttpSystem sys(e2e_queue(), 0);
    sys.start();
    const auto page = get_with_host(sys.port, "/", "127.0.0.1");
    INFO(page.substr(0, 800));
    REQUIRE(status_of(page) == 200);
    CHECK(contains(page, "\r\nX-Frame-Options: DENY\r\n"));
    CHECK(contains(page, "\r\nX-Content-Type-Options: nosniff\r\n"));
    CHECK(
        contains(page, "\r\nContent-Security-Policy: default-src 'self'; frame-ancestors 'none'"));
}
