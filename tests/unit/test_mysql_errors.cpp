#include <cppconn/exception.h>
#include <catch2/catch.hpp>

#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

// How the dispatcher sorts MySQL errors decides what it does next: reconnect (connection),
// run the statement again on the same connection (lock conflict), or set the outcome aside
// (data).
TEST_CASE("MySQL errors are sorted into connection, lock conflict and data errors", "[mysql]") {
    const sql::SQLException deadlock("Deadlock found when trying to get lock", "40001", 1213);
    const sql::SQLException lock_wait("Lock wait timeout exceeded", "HY000", 1205);
    const sql::SQLException gone("MySQL server has gone away", "HY000", 2006);
    const sql::SQLException out_of_range("Out of range value for column 'status'", "22003", 1264);

    CHECK(rowpump::is_lock_conflict(deadlock));
    CHECK(rowpump::is_lock_conflict(lock_wait));
    CHECK_FALSE(rowpump::is_lock_conflict(gone));
    CHECK_FALSE(rowpump::is_lock_conflict(out_of_range));

    CHECK(rowpump::is_connection_error(gone));
    CHECK_FALSE(rowpump::is_connection_error(deadlock));
    CHECK_FALSE(rowpump::is_connection_error(lock_wait));

    CHECK(rowpump::is_data_error(out_of_range));
    CHECK_FALSE(rowpump::is_data_error(deadlock));
    CHECK_FALSE(rowpump::is_data_error(gone));
}

TEST_CASE("an error one row's values may cause isolates that row; the statement's do not",
          "[mysql]") {
    const sql::SQLException regexp("Regex error 'missing closing parenthesis'", "42000", 1139);
    const sql::SQLException out_of_range("Out of range value for column 'status'", "22003", 1264);
    const sql::SQLException no_table("Table 'app.x' doesn't exist", "42S02", 1146);
    const sql::SQLException no_column("Unknown column 'x' in 'field list'", "42S22", 1054);
    const sql::SQLException denied("UPDATE command denied to user", "42000", 1142);
    const sql::SQLException read_only("The MariaDB server is running with --read-only", "HY000",
                                      1290);
    const sql::SQLException deadlock("Deadlock found when trying to get lock", "40001", 1213);
    const sql::SQLException gone("MySQL server has gone away", "HY000", 2006);

    CHECK(rowpump::is_row_error(regexp));
    CHECK(rowpump::is_row_error(out_of_range));
    for (const auto* e : {&no_table, &no_column, &denied, &read_only, &deadlock, &gone}) {
        INFO(e->getErrorCode());
        CHECK_FALSE(rowpump::is_row_error(*e));
    }
}

TEST_CASE("a lock conflict is retried at once, a few times; other errors are not", "[mysql]") {
    const sql::SQLException deadlock("Deadlock found when trying to get lock", "40001", 1213);
    const sql::SQLException out_of_range("Out of range value for column 'status'", "22003", 1264);
    int calls = 0;

    SECTION("two deadlocks, then it goes through") {
        rowpump::retry_lock_conflicts([&] {
            if (++calls <= 2) throw deadlock;
        });
        CHECK(calls == 3);
    }
    SECTION("a conflict that keeps coming back reaches the caller") {
        CHECK_THROWS_AS(rowpump::retry_lock_conflicts([&] {
                            ++calls;
                            throw deadlock;
                        }),
                        sql::SQLException);
        CHECK(calls == rowpump::kLockConflictAttempts);
    }
    SECTION("any other error reaches the caller at once") {
        CHECK_THROWS_AS(rowpump::retry_lock_conflicts([&] {
                            ++calls;
                            throw out_of_range;
                        }),
                        sql::SQLException);
        CHECK(calls == 1);
    }
}
