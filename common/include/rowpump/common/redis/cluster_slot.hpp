#pragma once

// Redis Cluster's key -> hash slot mapping (cluster spec, "Keys distribution model"):
// CRC16-CCITT (XMODEM) of the key, or of its hash tag, modulo 16384. Every key of a queue
// carries the tag {<queue>}, so a queue lives in one slot, on one node.

#include <cstdint>
#include <string_view>

namespace rowpump::redis {

constexpr int kClusterSlots = 16384;

std::uint16_t crc16(std::string_view data);

// The part of `key` that is hashed: the text between the first '{' and the first '}' after
// it, when that is not empty; else the whole key.
std::string_view hash_tag(std::string_view key);

int key_slot(std::string_view key);

}  // namespace rowpump::redis
