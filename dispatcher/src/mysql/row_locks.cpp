#include "mysql/row_locks.hpp"

#include <cppconn/resultset.h>

#include <cstdlib>

#include "mysql/statement_rows.hpp"

namespace rowpump {

template <typename Sql>
void RowLocks::positions(std::map<std::size_t, std::unique_ptr<sql::PreparedStatement>>& statements,
                         Sql&& sql, const std::vector<std::string>& ids,
                         const std::vector<std::size_t>& asked, std::vector<bool>& found) {
    // Each row bound as (its position in `ids`, its id): the statement returns positions,
    // so an id the table spells differently (a number with a leading zero, another case in a
    // case-insensitive collation) is still recognised.
    std::vector<std::vector<std::string>> rows;
    rows.reserve(asked.size());
    for (const auto at : asked) rows.push_back({std::to_string(at), ids[at]});
    const auto statement = [&](std::size_t size) -> sql::PreparedStatement& {
        auto& stmt = statements[size];
        if (!stmt) stmt = session_.prepare(sql(size));
        return *stmt;
    };
    for_each_chunk(rows, 2, statement, [&](sql::PreparedStatement& stmt) {
        std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
        std::int64_t n = 0;
        while (rs->next()) {
            const auto at = std::strtoull(rs->getString(1).c_str(), nullptr, 10);
            if (at < found.size()) found[at] = true;
            ++n;
        }
        return n;
    });
}

std::vector<RowLocks::Row> RowLocks::lock(const std::vector<std::string>& ids) {
    std::vector<std::size_t> all(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) all[i] = i;
    std::vector<bool> ours(ids.size(), false);
    positions(
        lock_statements_, [this](std::size_t n) { return session_.sql().lock_rows(n); }, ids, all,
        ours);
    std::vector<std::size_t> missed;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (!ours[i]) missed.push_back(i);
    }
    std::vector<bool> exists(ids.size(), false);
    // Only when a row was passed over: most batches find every row free.
    if (!missed.empty()) {
        positions(
            find_statements_, [this](std::size_t n) { return session_.sql().find_rows(n); }, ids,
            missed, exists);
    }
    std::vector<Row> out(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i)
        out[i] = ours[i] ? Row::ours : exists[i] ? Row::locked : Row::gone;
    return out;
}

}  // namespace rowpump
