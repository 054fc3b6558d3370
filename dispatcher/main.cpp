// The rowpump executable: parses arguments, loads the config, runs one subcommand.
#include <iostream>

#include "rowpump/dispatcher/cli/command_line.hpp"
#include "rowpump/dispatcher/cli/commands.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/observe/logging.hpp"

int main(int argc, char** argv) {
    using rowpump::kUsageError;
    const auto cl = rowpump::make_command_line();
    try {
        cl->app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version exit 0; a missing subcommand or a bad argument exits 2.
        return cl->app.exit(e) == 0 ? 0 : kUsageError;
    }

    rowpump::Config config;
    try {
        config = rowpump::load_config(cl->config_file);
    } catch (const rowpump::ConfigError& e) {
        std::cerr << "rowpump: config error: " << e.what() << "\n";
        return kUsageError;
    }
    rowpump::setup_logging(cl->log_level.empty() ? config.log_level : cl->log_level,
                           cl->log_format);

    const auto watch_interval = rowpump::parse_duration(cl->watch);
    if (!watch_interval) {
        std::cerr << "rowpump: --watch: invalid duration '" << cl->watch
                  << "' (examples: 500ms, 1s)\n";
        return kUsageError;
    }
    if (*cl->run) return rowpump::command_run(config);
    if (*cl->check) return rowpump::command_check(config, cl->strict, std::cout, std::cerr);
    const auto lock_wait_duration = rowpump::parse_duration(cl->lock_wait);
    if (!lock_wait_duration || lock_wait_duration->count() <= 0) {
        std::cerr << "rowpump: --lock-wait: invalid duration '" << cl->lock_wait
                  << "' (examples: 5s, 1m)\n";
        return kUsageError;
    }
    if (*cl->migrate) {
        return rowpump::command_migrate(config, {cl->apply, *lock_wait_duration}, std::cout,
                                        std::cerr);
    }
    if (*cl->status) {
        return rowpump::command_status(config, *watch_interval, cl->count, cl->json, std::cout,
                                       std::cerr);
    }
    if (*cl->pause || *cl->resume) {
        return rowpump::command_pause(config, cl->queue, cl->pause->parsed(), std::cout, std::cerr);
    }
    if (*cl->limit_cmd) {
        rowpump::LimitCommand limit;
        limit.action = *cl->limit_set     ? rowpump::LimitCommand::Action::set
                       : *cl->limit_unset ? rowpump::LimitCommand::Action::unset
                                          : rowpump::LimitCommand::Action::list;
        limit.queue = cl->queue;
        limit.key = cl->key;
        limit.limits = cl->limits;
        return rowpump::command_limit(config, limit, std::cout, std::cerr);
    }
    if (*cl->dead) return rowpump::command_dead(config, cl->queue, cl->limit, std::cout, std::cerr);
    return rowpump::command_retry(config, cl->queue, cl->shard, cl->ids, cl->all, cl->set,
                                  std::cout, std::cerr);
}
