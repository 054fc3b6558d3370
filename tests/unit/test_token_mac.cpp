// The MAC in claim: redis tokens (TokenMac): only a holder of the queue's secret makes a token
// that verifies, for exactly its queue, row and token; the SDKs' token rule still takes it; the
// row sees the token without it.

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <catch2/catch.hpp>

#include <string>

#include "rowpump/common/protocol/messages.hpp"
#include "rowpump/dispatcher/loop/token_mac.hpp"

using rowpump::TokenMac;

namespace {

const std::string kSecret(64, '7');
const std::string kToken = "1A2B3C4D00000000-1-83DCEFB7";  // a scan's token for row "1"

}  // namespace

TEST_CASE("a sealed token verifies for its queue, row and token only", "[token_mac]") {
    const TokenMac mac("users", kSecret);
    const auto sealed = mac.seal("1", kToken);
    REQUIRE(sealed.size() == kToken.size() + TokenMac::kDigits);
    CHECK(sealed.substr(0, kToken.size()) == kToken);
    CHECK(mac.verifies("1", sealed));
    CHECK(mac.seal("1", kToken) == sealed);  // the same inputs, the same MAC

    CHECK_FALSE(mac.verifies("2", sealed));                                      // another row
    CHECK_FALSE(TokenMac("orders", kSecret).verifies("1", sealed));              // another queue
    CHECK_FALSE(TokenMac("users", std::string(64, '8')).verifies("1", sealed));  // another secret
    CHECK_FALSE(mac.verifies("1", kToken));                                      // no MAC
    auto other_attempt = sealed;
    other_attempt[17] = '2';
    CHECK_FALSE(mac.verifies("1", other_attempt));
    auto other_batch = sealed;
    other_batch[0] = 'F';
    CHECK_FALSE(mac.verifies("1", other_batch));
    for (std::size_t at = kToken.size(); at < sealed.size(); ++at) {
        auto flipped = sealed;
        flipped[at] = flipped[at] == '0' ? '1' : '0';
        CHECK_FALSE(mac.verifies("1", flipped));
    }
    // Length prefixes: the id's bytes cannot move into the queue's or the token's.
    CHECK(TokenMac("users", kSecret).seal("12", "3") != TokenMac("users", kSecret).seal("1", "23"));
}

TEST_CASE("the MAC is HMAC-SHA256 as OpenSSL computes it, its first 64 bits", "[token_mac]") {
    const std::string secret = TokenMac::fresh_secret();
    std::string key;
    for (std::size_t i = 0; i < secret.size(); i += 2)
        key += static_cast<char>(std::stoi(secret.substr(i, 2), nullptr, 16));
    const std::string message = "5:users1:1" + kToken;  // lengths and bytes, as token_mac.cpp
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    REQUIRE(HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
                 reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest,
                 &length) != nullptr);
    std::string expected;
    for (int i = 0; i < 8; ++i) {
        static const char* const kHex = "0123456789ABCDEF";
        expected += kHex[digest[i] >> 4];
        expected += kHex[digest[i] & 15];
    }
    CHECK(TokenMac("users", secret).seal("1", kToken) == kToken + expected);
}

TEST_CASE("a sealed token keeps the protocol's token shape, and the row sees it unsealed",
          "[token_mac]") {
    const TokenMac mac("users", kSecret);
    const std::string longest = "1A2B3C4D00000000-999999999-83DCEFB7";
    for (const auto& token : {kToken, longest}) {
        const auto sealed = mac.seal("a:b c%", token);
        INFO(sealed);
        CHECK(rowpump::protocol::is_valid_token(sealed));  // as every SDK checks it
        CHECK(rowpump::protocol::token_attempt(sealed) == rowpump::protocol::token_attempt(token));
        CHECK(sealed.size() <= 51);
        CHECK(TokenMac::unsealed(sealed) == token);
    }
    // A token of claim: mysql, or one cut short, is left as it is.
    CHECK(TokenMac::unsealed(kToken) == kToken);
    CHECK(TokenMac::unsealed("1A2B3C4D5E6F7A8B-3-0011AABB") == "1A2B3C4D5E6F7A8B-3-0011AABB");
    CHECK(TokenMac::unsealed("nonsense") == "nonsense");
}

TEST_CASE("token secrets: fresh ones are random, odd ones are refused", "[token_mac]") {
    const auto a = TokenMac::fresh_secret(), b = TokenMac::fresh_secret();
    CHECK(TokenMac::valid_secret(a));
    CHECK(a != b);
    CHECK_FALSE(TokenMac::valid_secret(""));
    CHECK_FALSE(TokenMac::valid_secret(std::string(63, 'a')));
    CHECK_FALSE(TokenMac::valid_secret(std::string(65, 'a')));
    CHECK_FALSE(TokenMac::valid_secret(std::string(64, 'g')));
    CHECK_THROWS(TokenMac("users", "short"));
}
