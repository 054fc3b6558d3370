#include <signal.h>

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <ostream>
#include <thread>

#include "rowpump/dispatcher/mysql/migration.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

namespace {

constexpr int kLockWaitTimeout = 1205;
constexpr int kQueryInterrupted = 1317;

std::int64_t scalar(sql::Connection& conn, const std::string& statement) {
    std::unique_ptr<sql::Statement> stmt(conn.createStatement());
    std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery(statement));
    return rs->next() ? rs->getInt64(1) : 0;
}

std::string seconds(std::chrono::steady_clock::duration d) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(d).count());
    return text;
}

// "Waiting for table metadata lock", "altering table, stage 1 of 2, 42.0%": what the server
// reports for the statement (Dialect::ddl_progress). Only words for the operator: a server
// that does not let us read them (MySQL's performance_schema) leaves the elapsed time alone.
std::string server_progress(sql::Connection& monitor, const Dialect& dialect, std::int64_t id) {
    try {
        std::unique_ptr<sql::PreparedStatement> stmt(
            monitor.prepareStatement(dialect.ddl_progress()));
        stmt->setInt64(1, id);
        std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
        if (!rs->next()) return "";
        std::string text = rs->getString(1);
        if (!rs->isNull(3) && rs->getDouble(3) > 0) {
            char percent[32];
            std::snprintf(percent, sizeof percent, ", %.1f%%",
                          static_cast<double>(rs->getDouble(3)));
            text += ", " + std::string(rs->getString(2)) + percent;
        }
        return text;
    } catch (const sql::SQLException& e) {
        if (is_connection_error(e)) throw;
        return "(progress not readable: " + describe(e) + ")";
    }
}

// One line per session that may hold the table: "connection 42 (app@host): ... (KILL 42)".
std::string sessions(sql::ResultSet& rs) {
    std::string text;
    while (rs.next()) {
        const std::string id = rs.getString(1), command = rs.getString(5);
        text += "\n  connection " + id + " (" + std::string(rs.getString(2)) + "@" +
                std::string(rs.getString(3)) + "): " + std::string(rs.getString(4)) + " s, " +
                (command == "Sleep" ? std::string("idle")
                                    : "running: " + std::string(rs.getString(6))) +
                " (end it, or KILL " + id + ")";
    }
    return text;
}

// Who may hold the metadata lock the ALTER waited for: the open transactions of other
// sessions (INNODB_TRX needs the PROCESS privilege), else every other session this user can
// see; a LOCK TABLES holds it too.
std::string lock_holders(sql::Connection& monitor, std::int64_t ddl_id) {
    const std::string transactions =
        "SELECT p.ID, p.USER, p.HOST, CONCAT('transaction open for ', TIMESTAMPDIFF(SECOND, "
        "t.trx_started, "
        "NOW())), p.COMMAND, LEFT(COALESCE(t.trx_query, p.INFO, ''), 100) FROM "
        "information_schema.INNODB_TRX t "
        "JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id "
        "WHERE p.ID NOT IN (?, CONNECTION_ID()) ORDER BY t.trx_started";
    const std::string visible =
        "SELECT ID, USER, HOST, CONCAT('in its current state for ', TIME), COMMAND, "
        "LEFT(COALESCE(INFO, ''), 100) "
        "FROM information_schema.PROCESSLIST WHERE ID NOT IN (?, CONNECTION_ID()) AND COMMAND <> "
        "'Daemon' "
        "ORDER BY TIME DESC";
    std::string text, note;
    for (const auto* statement : {&transactions, &visible}) {
        try {
            std::unique_ptr<sql::PreparedStatement> stmt(monitor.prepareStatement(*statement));
            stmt->setInt64(1, ddl_id);
            std::unique_ptr<sql::ResultSet> rs(stmt->executeQuery());
            text = sessions(*rs);
            break;
        } catch (const sql::SQLException& e) {
            note = " (open transactions not visible: " + describe(e) +
                   "; other sessions of this user:)";
        }
    }
    return note +
           (text.empty() ? "\n  none visible: a LOCK TABLES, or a session of another user" : text);
}

// The statement, run in a thread of its own so that the caller can report and cancel.
class DdlThread {
public:
    DdlThread(sql::Connection& conn, std::string statement)
        : conn_(conn), statement_(std::move(statement)) {
        thread_ = std::thread([this] { run(); });
    }
    ~DdlThread() { thread_.join(); }
    bool done() const { return done_; }
    int error_code() const { return error_code_; }
    const std::string& error() const { return error_; }

private:
    void run() {
        MysqlThread mysql_thread;
        try {
            std::unique_ptr<sql::Statement> stmt(conn_.createStatement());
            stmt->execute(statement_);
        } catch (const sql::SQLException& e) {
            error_code_ = e.getErrorCode();
            error_ = describe(e);
        }
        done_ = true;
    }

    sql::Connection& conn_;
    const std::string statement_;
    int error_code_ = 0;
    std::string error_;
    std::atomic<bool> done_{false};
    std::thread thread_;
};

}  // namespace

namespace {

DdlOutcome outcome_of(const DdlThread& ddl, bool cancelled) {
    if (ddl.error_code() == 0) return DdlOutcome::done;
    if (ddl.error_code() == kQueryInterrupted || cancelled) return DdlOutcome::cancelled;
    return ddl.error_code() == kLockWaitTimeout ? DdlOutcome::lock_timeout : DdlOutcome::failed;
}

void report(DdlOutcome outcome, const DdlThread& ddl, const std::string& elapsed,
            std::int64_t wait_seconds, const std::string& holders, std::ostream& out,
            std::ostream& err) {
    switch (outcome) {
        case DdlOutcome::done:
            out << "-- applied in " << elapsed << "\n";
            break;
        case DdlOutcome::cancelled:
            err << "-- cancelled after " << elapsed << "; the server rolled the statement back\n";
            break;
        case DdlOutcome::lock_timeout:
            err << "-- gave up after " << elapsed
                << ": the table stayed locked longer than --lock-wait (" << wait_seconds
                << " s); nothing was changed. Sessions that may hold it:" << holders << "\n";
            break;
        case DdlOutcome::failed:
            err << "mysql: " << ddl.error() << "\n";
            break;
    }
}

}  // namespace

DdlOutcome run_ddl(sql::Connection& conn, const MysqlConfig& mysql, const Dialect& dialect,
                   const std::string& statement, Millis lock_wait, std::ostream& out,
                   std::ostream& err) {
    const auto wait_seconds = std::max<std::int64_t>(1, (lock_wait.count() + 999) / 1000);
    std::unique_ptr<sql::Statement>(conn.createStatement())
        ->execute("SET SESSION lock_wait_timeout = " + std::to_string(wait_seconds));
    const std::int64_t id = scalar(conn, "SELECT CONNECTION_ID()");
    auto monitor = connect_mysql(mysql);  // progress, KILL QUERY, who holds the table

    sigset_t signals, previous;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, &previous);
    const auto started = std::chrono::steady_clock::now();
    auto next_report = started + std::chrono::seconds(1);
    bool cancelled = false;
    DdlThread ddl(conn, statement);
    const timespec tick{0, 100'000'000};
    while (!ddl.done()) {
        const int sig = sigtimedwait(&signals, nullptr, &tick);
        if (sig > 0 && !cancelled) {
            err << "-- " << strsignal(sig)
                << ": cancelling the statement on the server (KILL QUERY " << id << ")\n";
            std::unique_ptr<sql::Statement>(monitor->createStatement())
                ->execute("KILL QUERY " + std::to_string(id));
            cancelled = true;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= next_report && !ddl.done()) {
            err << "-- " << seconds(now - started) << ": " << server_progress(*monitor, dialect, id)
                << "\n";
            next_report += std::chrono::seconds(1);
        }
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    const auto outcome = outcome_of(ddl, cancelled);
    const auto holders = outcome == DdlOutcome::lock_timeout ? lock_holders(*monitor, id) : "";
    report(outcome, ddl, seconds(std::chrono::steady_clock::now() - started), wait_seconds, holders,
           out, err);
    return outcome;
}

}  // namespace rowpump
