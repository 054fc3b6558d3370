#pragma once

// claim: redis: proof that a task's token was issued by a dispatcher of the queue. The leader
// keeps the tasks it pushed (InFlight), but one that learns them from Redis (a new leader, or
// one after a Redis error or a lapsed lock) reads lists every worker of the queue can write.
// So each token ends with a MAC: HMAC-SHA256 over the queue's name, the row's id and the rest
// of the token, keyed with the queue's secret, its first 64 bits as 16 hex digits appended to
// the token's last part (`<16 hex>-<attempt>-<8 hex><16 hex>`, a shape the protocol allows).
// A task learned from Redis whose token does not verify is not in flight, and its report is
// stale. The secret is 32 random bytes, kept in Redis (Keys::secret) where the documented
// worker ACL cannot read it, written by the first leader and shared by every dispatcher of
// the queue (docs/semantics.md, "An outcome applies only to a task the leader issued").
// The row never sees the MAC: outcomes are applied with unsealed() tokens, as before.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace rowpump {

// One thread at a time (a queue's loop).
class TokenMac {
public:
    static constexpr std::size_t kDigits = 16;        // the MAC at the token's end, hex
    static constexpr std::size_t kSecretDigits = 64;  // the secret as Redis holds it: 32 bytes

    // A fresh secret from OpenSSL's random generator, as kSecretDigits lower-case hex digits.
    static std::string fresh_secret();
    // Whether `secret` has the shape fresh_secret() gives.
    static bool valid_secret(std::string_view secret);

    // `secret`: valid_secret(secret).
    TokenMac(std::string_view queue, std::string_view secret);

    // `token` (made by the scan: `<16 hex>-<attempt>-<8 hex>`) with its MAC for row `id`.
    std::string seal(std::string_view id, std::string_view token) const;
    // Whether `token` ends with the MAC seal() gives it for row `id`.
    bool verifies(std::string_view id, std::string_view token) const;
    // The token without its MAC, as the row's SQL compares and stores it; a token of another
    // shape as it is.
    static std::string_view unsealed(std::string_view token);

private:
    std::string mac(std::string_view id, std::string_view token) const;

    struct ContextFree {
        void operator()(evp_md_ctx_st* context) const;
    };
    using Context = std::unique_ptr<evp_md_ctx_st, ContextFree>;
    std::string queue_;
    // HMAC's two SHA-256 states with the keyed pads absorbed, copied for each MAC: OpenSSL's
    // one-shot HMAC() sets up its digest anew every call, ten times the cost.
    Context inner_, outer_, work_;
};

}  // namespace rowpump
