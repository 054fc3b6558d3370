// The HTTP port under slow, large and malformed requests: bounded in size and time, answered
// with 413/414/431/411, and /healthz answered throughout.

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "http_system.hpp"
#include "raw_http.hpp"

using namespace rowpump::testing;

namespace {

const std::string kHead = "Host: 127.0.0.1\r\nConnection: close\r\n";

}  // namespace

TEST_CASE("slow clients and large bodies do not keep /healthz from answering", "[security]") {
    HttpSystem sys(e2e_queue(), 0);
    sys.start();

    // 16 slowloris connections (a header byte every 200 ms, reconnecting when cut) and 4
    // connections that announce a 128 MiB body and send it slowly.
    std::atomic<bool> done{false};
    std::atomic<int> cut{0};
    std::vector<std::thread> attackers;
    for (int i = 0; i < 20; ++i) {
        attackers.emplace_back([&, i] {
            const bool large = i < 4;
            while (!done) {
                try {
                    RawConnection c(sys.port);
                    bool open = c.send(large ? "POST /api/queues/users/pause HTTP/1.1\r\n" + kHead +
                                                   "Content-Length: 134217728\r\n\r\n"
                                             : "GET /metrics HTTP/1.1\r\n" + kHead);
                    while (open && !done) {
                        open = c.send(large ? std::string(4096, 'x') : "X");
                        std::this_thread::sleep_for(std::chrono::milliseconds(200));
                    }
                    if (!open) ++cut;
                } catch (const std::exception&) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(200));
                }
            }
        });
    }

    // Probes for longer than the request deadline (10 s): every one is answered.
    int probes = 0, answered = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(14);
    while (std::chrono::steady_clock::now() < until) {
        ++probes;
        if (sys.get("/healthz").status == 200) ++answered;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    done = true;
    for (auto& t : attackers) t.join();
    INFO(sys.dispatcher->log_tail());
    CHECK(probes > 20);
    CHECK(answered == probes);
    // The slow connections were cut at the whole-request deadline, the large bodies at once.
    CHECK(cut >= 16);
}

TEST_CASE("bodies, headers and request lines over the limits get 413, 431 and 414", "[security]") {
    HttpSystem sys(e2e_queue(), 0);
    sys.start();

    // A 128 MiB body is refused from its Content-Length, before any of it is read.
    const auto large = raw_request(sys.port, "POST /api/queues/users/pause HTTP/1.1\r\n" + kHead +
                                                 "Content-Length: 134217728\r\n\r\n");
    CHECK(status_of(large) == 413);
    // A chunked (unsized) body is refused too.
    CHECK(status_of(raw_request(sys.port, "POST /api/queues/users/pause HTTP/1.1\r\n" + kHead +
                                              "Transfer-Encoding: chunked\r\n\r\n")) == 411);

    std::string many;
    for (int i = 0; i < 100; ++i) many += "X-Filler-" + std::to_string(i) + ": 1\r\n";
    CHECK(status_of(raw_request(sys.port, "GET /healthz HTTP/1.1\r\n" + kHead + many + "\r\n")) ==
          431);
    const std::string big = "X-Big: " + std::string(20000, 'b') + "\r\n";
    CHECK(status_of(raw_request(sys.port, "GET /healthz HTTP/1.1\r\n" + kHead + big + "\r\n")) ==
          431);

    // A request line that never ends is answered once it passes the limit, not read on.
    RawConnection c(sys.port);
    c.send("GET /" + std::string(64 * 1024, 'a'));
    CHECK(status_of(c.read_all(std::chrono::seconds(5))) == 414);

    // An honest request still works after all that.
    CHECK(sys.get("/healthz").status == 200);
}
