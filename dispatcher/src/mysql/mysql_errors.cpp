#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

#include <cppconn/exception.h>

namespace rowpump {

bool is_connection_error(const sql::SQLException& e) {
    switch (e.getErrorCode()) {
        case 1053:  // server shutdown in progress
        case 1927:  // connection was killed
        case 2002:  // can't connect through socket
        case 2003:  // can't connect to server
        case 2006:  // server has gone away
        case 2013:  // lost connection during query
        case 2055:  // lost connection (system error)
            return true;
        default:
            // The connector reports some transport failures without a code.
            return e.getErrorCode() == 0;
    }
}

bool is_lock_conflict(const sql::SQLException& e) {
    return e.getErrorCode() == 1213 || e.getErrorCode() == 1205;  // deadlock, lock wait timeout
}

void retry_lock_conflicts(const std::function<void()>& run) {
    for (int attempt = 1;; ++attempt) {
        try {
            return run();
        } catch (const sql::SQLException& e) {
            if (!is_lock_conflict(e) || attempt == kLockConflictAttempts) throw;
        }
    }
}

bool is_data_error(const sql::SQLException& e) {
    switch (e.getErrorCode()) {
        case 1048:  // column cannot be null
        case 1062:  // duplicate entry
        case 1264:  // out of range
        case 1265:  // data truncated
        case 1292:  // incorrect value (dates, numbers)
        case 1365:  // division by 0
        case 1366:  // incorrect value for column
        case 1406:  // data too long
        case 1451:  // foreign key: row is referenced
        case 1452:  // foreign key: parent row missing
        case 1690:  // value out of range in an expression
        case 3819:  // check constraint (MySQL)
        case 4025:  // check constraint (MariaDB)
            return true;
        default: {
            const std::string state = e.getSQLState();
            return state.rfind("22", 0) == 0 || state.rfind("23", 0) == 0;
        }
    }
}

bool is_row_error(const sql::SQLException& e) {
    if (is_connection_error(e) || is_lock_conflict(e)) return false;
    switch (e.getErrorCode()) {
        case 1021:  // disk full
        case 1030:  // storage engine error
        case 1036:  // table is read only
        case 1037:  // out of memory
        case 1038:  // out of sort memory
        case 1040:  // too many connections
        case 1041:  // out of memory
        case 1044:  // access denied to the database
        case 1045:  // access denied
        case 1054:  // unknown column
        case 1064:  // syntax error
        case 1114:  // table is full
        case 1142:  // command denied on the table
        case 1143:  // command denied on a column
        case 1146:  // table does not exist
        case 1180:  // error on commit
        case 1181:  // error on rollback
        case 1290:  // --read-only and the like
        case 1317:  // query interrupted
        case 1792:  // read-only transaction
        case 1836:  // read-only mode
        case 1969:  // max_statement_time exceeded (MariaDB)
        case 3024:  // max_execution_time exceeded (MySQL)
            return false;
        default:
            return true;
    }
}

std::string describe(const sql::SQLException& e) {
    if (e.getErrorCode() == kUnsupportedServerError)
        return "unsupported server: " + std::string(e.what());
    return "MySQL error " + std::to_string(e.getErrorCode()) + " (" + e.getSQLState() +
           "): " + e.what();
}

}  // namespace rowpump
