#pragma once

// Rows bound to statements prepared for a number of rows: the outcome statements, the lease
// renewals and the locking read of scanned rows take many rows per statement, in chunks.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rowpump/common/duration.hpp"

namespace rowpump {

// Rows per statement of outcomes or of rows a scan found; keeps the parameter count far below
// MySQL's limit. Such statements are prepared once per kind and size (see for_each_statement).
constexpr std::size_t kRowsPerStatement = 512;

// Calls chunk(start, n, size) for each run of at most kRowsPerStatement of `count` rows: n rows
// from `start`, bound to a statement prepared for `size` rows (n rounded up to a power of two,
// so that few sizes are prepared; the extra rows repeat the chunk's last one).
template <typename F>
void for_each_statement(std::size_t count, F&& chunk) {
    for (std::size_t start = 0; start < count; start += kRowsPerStatement) {
        const std::size_t n = std::min(kRowsPerStatement, count - start);
        std::size_t size = 1;
        while (size < n) size *= 2;
        chunk(start, n, size);
    }
}

// Binds `rows` to the statements `statement(size)` gives, a chunk at a time, the first
// `columns` values of each row, and sums what `run` returns for each chunk.
template <typename Statement, typename Run>
std::int64_t for_each_chunk(const std::vector<std::vector<std::string>>& rows, std::size_t columns,
                            Statement&& statement, Run&& run) {
    std::int64_t total = 0;
    for_each_statement(rows.size(), [&](std::size_t start, std::size_t n, std::size_t size) {
        auto& stmt = statement(size);
        // A multi-table UPDATE changes a row once however many joined rows match it, and
        // counts it once.
        unsigned index = 1;
        for (std::size_t i = 0; i < size; ++i) {
            const auto& row = rows[start + std::min(i, n - 1)];
            for (std::size_t c = 0; c < std::min(columns, row.size()); ++c)
                stmt.setString(index++, row[c]);
        }
        total += run(stmt);
    });
    return total;
}

inline std::string micros(Millis d) {
    return std::to_string(d.count() * 1000);
}

}  // namespace rowpump
