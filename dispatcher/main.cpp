// The rowpump executable: parses arguments, loads the config, runs one subcommand.
#include <CLI/CLI.hpp>

#include <iostream>

#include "rowpump/dispatcher/cli/commands.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/observe/logging.hpp"

namespace {

constexpr int kUsageError = 2;

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"rowpump: claims due rows in MySQL and feeds their ids to Redis lists"};
    app.require_subcommand(1);
    app.fallthrough();  // global options may follow the subcommand too
    app.set_version_flag("--version", "rowpump " ROWPUMP_VERSION);
    std::string config_file, log_level, queue;
    app.add_option("--log-level", log_level,
                   "trace, debug, info, warn, error or off (overrides log_level)")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
    std::string log_format = "text";
    app.add_option("--log-format", log_format,
                   "text (the default; with syslog priorities under systemd) or json")
        ->check(CLI::IsMember({"text", "json"}));
    auto with_config = [&](CLI::App* cmd) {
        cmd->add_option("-c,--config", config_file, "YAML config file")
            ->required()
            ->check(CLI::ExistingFile);
        return cmd;
    };

    auto* run = with_config(app.add_subcommand("run", "run the dispatcher until SIGTERM/SIGINT"));
    bool strict = false;
    auto* check =
        with_config(app.add_subcommand("check", "check the config, the servers and the tables"));
    check->add_flag("--strict", strict, "fail on warnings too");
    bool apply = false;
    std::string lock_wait = "5s";
    auto* migrate =
        with_config(app.add_subcommand("migrate", "print (or apply) the ALTER TABLE statements"));
    migrate->add_flag("--apply", apply, "run them");
    migrate->add_option("--lock-wait", lock_wait,
                        "give up when the table stays locked this long (default 5s)");
    std::string watch = "0ms";
    int count = 0;
    auto* status =
        with_config(app.add_subcommand("status", "show each queue's backlog and counters"));
    status->add_option("--watch", watch, "repeat at this interval, e.g. 1s");
    status
        ->add_option("--count", count, "stop after this many repeats (default: until interrupted)")
        ->check(CLI::NonNegativeNumber);
    bool json = false;
    status->add_flag("--json", json, "one JSON object per queue and line instead of a table");
    int limit = 100;
    auto* dead = with_config(app.add_subcommand("dead", "list a queue's dead rows"));
    dead->add_option("queue", queue, "queue name")->required();
    dead->add_option("--limit", limit, "at most this many rows (default 100)")
        ->check(CLI::PositiveNumber);
    std::vector<std::string> ids;
    bool all = false;
    auto* retry = with_config(app.add_subcommand("retry", "make dead rows due again"));
    retry->add_option("queue", queue, "queue name")->required();
    retry->add_option("ids", ids, "row ids");
    retry->add_flag("--all", all, "every dead row of the queue");
    std::string shard;
    retry->add_option("--shard", shard,
                      "the shard whose rows to revive (required for a queue with shards)");
    std::string set;
    retry->add_option(
        "--set", set,
        "SET list applied to the rows, to make them due (e.g. \"status = 'pending'\")");
    auto* pause = with_config(app.add_subcommand("pause", "stop dispatching a queue"));
    pause->add_option("queue", queue, "queue name")->required();
    auto* resume = with_config(app.add_subcommand("resume", "dispatch a paused queue again"));
    resume->add_option("queue", queue, "queue name")->required();

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version exit 0; a missing subcommand or a bad argument exits 2.
        return app.exit(e) == 0 ? 0 : kUsageError;
    }

    rowpump::Config config;
    try {
        config = rowpump::load_config(config_file);
    } catch (const rowpump::ConfigError& e) {
        std::cerr << "rowpump: config error: " << e.what() << "\n";
        return kUsageError;
    }
    rowpump::setup_logging(log_level.empty() ? config.log_level : log_level, log_format);

    const auto watch_interval = rowpump::parse_duration(watch);
    if (!watch_interval) {
        std::cerr << "rowpump: --watch: invalid duration '" << watch << "' (examples: 500ms, 1s)\n";
        return kUsageError;
    }
    if (*run) return rowpump::command_run(config);
    if (*check) return rowpump::command_check(config, strict, std::cout, std::cerr);
    const auto lock_wait_duration = rowpump::parse_duration(lock_wait);
    if (!lock_wait_duration || lock_wait_duration->count() <= 0) {
        std::cerr << "rowpump: --lock-wait: invalid duration '" << lock_wait
                  << "' (examples: 5s, 1m)\n";
        return kUsageError;
    }
    if (*migrate)
        return rowpump::command_migrate(config, {apply, *lock_wait_duration}, std::cout, std::cerr);
    if (*status)
        return rowpump::command_status(config, *watch_interval, count, json, std::cout, std::cerr);
    if (*pause || *resume)
        return rowpump::command_pause(config, queue, pause->parsed(), std::cout, std::cerr);
    if (*dead) return rowpump::command_dead(config, queue, limit, std::cout, std::cerr);
    return rowpump::command_retry(config, queue, shard, ids, all, set, std::cout, std::cerr);
}
