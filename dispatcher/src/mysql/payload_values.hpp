#pragma once

// The values of a queue's payload columns in a claim's read (QueueSql::read_back,
// lock_scanned, scan_retried): `count` columns from column `first` on (1-based), in the
// config's order, std::nullopt for NULL.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rowpump {

template <typename ResultSet>
std::vector<std::optional<std::string>> read_payload(ResultSet& rs, unsigned first,
                                                     std::size_t count) {
    std::vector<std::optional<std::string>> values;
    values.reserve(count);
    for (unsigned i = first; i < first + count; ++i) {
        if (rs.isNull(i)) {
            values.emplace_back();
        } else {
            values.emplace_back(std::string(rs.getString(i)));
        }
    }
    return values;
}

}  // namespace rowpump
