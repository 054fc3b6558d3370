#pragma once

// Rows a transaction is about to write by id (outcomes, lease renewals), locked first with a
// read that passes over rows another transaction holds: an application that keeps one row
// locked (SELECT ... FOR UPDATE in a long transaction) then delays only the writes to that
// row, never the batch around it, which would otherwise wait for the lock, fail after
// innodb_lock_wait_timeout and be tried again whole (docs/semantics.md).

#include <cppconn/prepared_statement.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rowpump/dispatcher/mysql/mysql_session.hpp"

namespace rowpump {

class RowLocks {
public:
    enum class Row {
        ours,    // this transaction holds the row's lock now: writes to it wait for nobody
        locked,  // another transaction holds it: leave it for later
        gone,    // no row has this id (deleted): a write would change nothing
    };

    explicit RowLocks(MysqlSession& session) : session_(session) {}

    // Inside the caller's transaction: locks the rows of `ids` no other transaction holds, and
    // says for each id (in order) what became of its row. Ids of one row share its answer.
    // Throws sql::SQLException.
    std::vector<Row> lock(const std::vector<std::string>& ids);

private:
    // Marks in `found` the positions of `ids` (of those listed in `asked`) the statement
    // `sql(size)` returns.
    template <typename Sql>
    void positions(std::map<std::size_t, std::unique_ptr<sql::PreparedStatement>>& statements,
                   Sql&& sql, const std::vector<std::string>& ids,
                   const std::vector<std::size_t>& asked, std::vector<bool>& found);

    MysqlSession& session_;
    std::map<std::size_t, std::unique_ptr<sql::PreparedStatement>> lock_statements_,
        find_statements_;
};

}  // namespace rowpump
