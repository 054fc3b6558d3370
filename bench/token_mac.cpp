// What the MAC in claim: redis tokens costs the dispatcher (docs/benchmarks.md, "The token
// MAC"): TokenMac::seal, once per task pushed, and TokenMac::verifies, once per task a leader
// learns from Redis, timed over many calls on one core.
//   rowpump_bench_token_mac [calls]   (default 1,000,000)

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "rowpump/dispatcher/loop/token_mac.hpp"

int main(int argc, char** argv) {
    const long calls = argc > 1 ? std::atol(argv[1]) : 1000000;
    if (calls <= 0) {
        std::fprintf(stderr, "usage: %s [calls > 0]\n", argv[0]);
        return 2;
    }
    const rowpump::TokenMac mac("users", rowpump::TokenMac::fresh_secret());
    const std::string token = "1A2B3C4D00000000-1-83DCEFB7";  // a scan's token, before its MAC
    using Clock = std::chrono::steady_clock;
    std::size_t sink = 0;
    std::string sealed;
    const auto start = Clock::now();
    for (long i = 0; i < calls; ++i) {
        sealed = mac.seal(std::to_string(1000000 + i), token);
        sink += static_cast<unsigned char>(sealed.back());
    }
    const auto sealed_at = Clock::now();
    const std::string id = std::to_string(1000000 + calls - 1);
    for (long i = 0; i < calls; ++i) sink += mac.verifies(id, sealed) ? 1 : 0;
    const auto verified_at = Clock::now();
    const auto per_call = [&](Clock::duration d) {
        return std::chrono::duration<double, std::nano>(d).count() / static_cast<double>(calls);
    };
    std::printf("seal     %8.0f ns/call\nverifies %8.0f ns/call\n(%ld calls each; %zu)\n",
                per_call(sealed_at - start), per_call(verified_at - sealed_at), calls, sink);
    return 0;
}
