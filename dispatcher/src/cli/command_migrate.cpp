#include <cppconn/exception.h>
#include <mysql_connection.h>

#include <memory>
#include <ostream>
#include <vector>

#include "rowpump/dispatcher/cli/commands.hpp"
#include "rowpump/dispatcher/mysql/migration.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

namespace {

constexpr int kCancelledStatus = 130;  // as a shell reports a program ended by Ctrl-C

int apply_plans(sql::Connection& conn, const Config& config,
                const std::vector<MigrationPlan>& plans, Millis lock_wait, std::ostream& out,
                std::ostream& err) {
    for (const auto& plan : plans) {
        for (const auto& step : plan.steps) {
            if (!step.needed) continue;
            out << "-- queue " << plan.queue << ": " << step.what << "\n";
            out.flush();
            switch (
                run_ddl(conn, config.mysql, *plan.dialect, step.statement, lock_wait, out, err)) {
                case DdlOutcome::done:
                    break;
                case DdlOutcome::cancelled:
                    return kCancelledStatus;
                case DdlOutcome::lock_timeout:
                case DdlOutcome::failed:
                    return 1;
            }
        }
    }
    return 0;
}

int migrate_server(const Config& config, const MigrateOptions& options, std::ostream& out,
                   std::ostream& err) {
    std::unique_ptr<sql::Connection> conn;
    try {
        conn = connect_mysql(config.mysql);
    } catch (const sql::SQLException& e) {
        err << "mysql: " << describe(e) << "\n";
        if (options.apply) return 1;
        err << "printing the statements without looking at the tables\n";
    }
    try {
        std::vector<MigrationPlan> plans;
        for (const auto& queue : config.queues)
            plans.push_back(plan_migration(conn.get(), config, queue));
        for (const auto& plan : plans) print_plan(plan, out);
        if (!options.apply) return 0;
        out.flush();
        return apply_plans(*conn, config, plans, options.lock_wait, out, err);
    } catch (const sql::SQLException& e) {
        err << "mysql: " << describe(e) << "\n";
        return 1;
    }
}

}  // namespace

// One server at a time (a queue with shards has tables on several).
int command_migrate(const Config& config, const MigrateOptions& options, std::ostream& out,
                    std::ostream& err) {
    const auto servers = configs_by_server(config);
    for (const auto& server : servers) {
        if (servers.size() > 1) {
            out << "-- mysql " << server.mysql.host << ":" << server.mysql.port << "/"
                << server.mysql.database << "\n";
        }
        if (const int status = migrate_server(server, options, out, err); status != 0) {
            return status;
        }
    }
    return 0;
}

}  // namespace rowpump
