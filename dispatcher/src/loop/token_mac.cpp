#include "rowpump/dispatcher/loop/token_mac.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <new>
#include <stdexcept>

namespace rowpump {

namespace {

constexpr const char* kUpperHex = "0123456789ABCDEF";
constexpr std::size_t kIdChecksumDigits = 8;  // the token's last part before the MAC

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

void check(int ok) {
    if (ok != 1) throw std::runtime_error("OpenSSL's SHA-256 failed");
}

}  // namespace

std::string TokenMac::fresh_secret() {
    unsigned char bytes[kSecretDigits / 2];
    if (RAND_bytes(bytes, sizeof bytes) != 1) {
        throw std::runtime_error("OpenSSL's random generator gave no bytes for the token secret");
    }
    static constexpr const char* kLowerHex = "0123456789abcdef";
    std::string secret;
    secret.reserve(kSecretDigits);
    for (unsigned char b : bytes) {
        secret += kLowerHex[b >> 4];
        secret += kLowerHex[b & 15];
    }
    return secret;
}

bool TokenMac::valid_secret(std::string_view secret) {
    return secret.size() == kSecretDigits &&
           std::all_of(secret.begin(), secret.end(), [](char c) { return hex_value(c) >= 0; });
}

void TokenMac::ContextFree::operator()(evp_md_ctx_st* context) const {
    EVP_MD_CTX_free(context);
}

TokenMac::TokenMac(std::string_view queue, std::string_view secret)
    : queue_(queue), inner_(EVP_MD_CTX_new()), outer_(EVP_MD_CTX_new()), work_(EVP_MD_CTX_new()) {
    if (!valid_secret(secret)) throw std::invalid_argument("not a token secret");
    if (!inner_ || !outer_ || !work_) throw std::bad_alloc();
    // HMAC (RFC 2104) with a key shorter than SHA-256's 64-byte block: the key, zero padded,
    // XORed with 0x36 for the inner hash and 0x5c for the outer one.
    unsigned char inner_pad[64], outer_pad[64];
    for (std::size_t i = 0; i < sizeof inner_pad; ++i) {
        const int key = i < secret.size() / 2
                            ? hex_value(secret[2 * i]) * 16 + hex_value(secret[2 * i + 1])
                            : 0;
        inner_pad[i] = static_cast<unsigned char>(key ^ 0x36);
        outer_pad[i] = static_cast<unsigned char>(key ^ 0x5c);
    }
    check(EVP_DigestInit_ex(inner_.get(), EVP_sha256(), nullptr));
    check(EVP_DigestUpdate(inner_.get(), inner_pad, sizeof inner_pad));
    check(EVP_DigestInit_ex(outer_.get(), EVP_sha256(), nullptr));
    check(EVP_DigestUpdate(outer_.get(), outer_pad, sizeof outer_pad));
}

std::string TokenMac::mac(std::string_view id, std::string_view token) const {
    // Lengths first: no two (queue, id, token) give the same bytes.
    const std::string lengths[] = {std::to_string(queue_.size()) + ":",
                                   std::to_string(id.size()) + ":"};
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    auto* work = work_.get();
    check(EVP_MD_CTX_copy_ex(work, inner_.get()));
    check(EVP_DigestUpdate(work, lengths[0].data(), lengths[0].size()));
    check(EVP_DigestUpdate(work, queue_.data(), queue_.size()));
    check(EVP_DigestUpdate(work, lengths[1].data(), lengths[1].size()));
    check(EVP_DigestUpdate(work, id.data(), id.size()));
    check(EVP_DigestUpdate(work, token.data(), token.size()));
    check(EVP_DigestFinal_ex(work, digest, &length));
    check(EVP_MD_CTX_copy_ex(work, outer_.get()));
    check(EVP_DigestUpdate(work, digest, length));
    check(EVP_DigestFinal_ex(work, digest, &length));
    std::string out;
    out.reserve(kDigits);
    for (std::size_t i = 0; i < kDigits / 2; ++i) {
        out += kUpperHex[digest[i] >> 4];
        out += kUpperHex[digest[i] & 15];
    }
    return out;
}

std::string TokenMac::seal(std::string_view id, std::string_view token) const {
    return std::string(token) + mac(id, token);
}

bool TokenMac::verifies(std::string_view id, std::string_view token) const {
    const auto body = unsealed(token);
    if (body.size() == token.size()) return false;
    const auto expected = mac(id, body);
    return CRYPTO_memcmp(expected.data(), token.data() + body.size(), kDigits) == 0;
}

std::string_view TokenMac::unsealed(std::string_view token) {
    const auto dash = token.rfind('-');
    if (dash == std::string_view::npos || token.size() - dash - 1 != kIdChecksumDigits + kDigits) {
        return token;
    }
    return token.substr(0, token.size() - kDigits);
}

}  // namespace rowpump
