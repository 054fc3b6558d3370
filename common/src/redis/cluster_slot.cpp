#include "rowpump/common/redis/cluster_slot.hpp"

namespace rowpump::redis {

std::uint16_t crc16(std::string_view data) {
    // Bitwise CRC16-CCITT, polynomial 0x1021, initial value 0: a few hundred ns per key,
    // computed once per connection, so no table.
    std::uint16_t crc = 0;
    for (unsigned char byte : data) {
        crc = static_cast<std::uint16_t>(crc ^ (byte << 8));
        for (int bit = 0; bit < 8; ++bit) {
            crc = (crc & 0x8000) != 0 ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021)
                                      : static_cast<std::uint16_t>(crc << 1);
        }
    }
    return crc;
}

std::string_view hash_tag(std::string_view key) {
    const auto open = key.find('{');
    if (open == std::string_view::npos) return key;
    const auto close = key.find('}', open + 1);
    if (close == std::string_view::npos || close == open + 1) return key;
    return key.substr(open + 1, close - open - 1);
}

int key_slot(std::string_view key) {
    return crc16(hash_tag(key)) % kClusterSlots;
}

}  // namespace rowpump::redis
