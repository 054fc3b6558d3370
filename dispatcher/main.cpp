// The rowpump executable: parses arguments, loads the config, runs one subcommand.
#include <CLI/CLI.hpp>

#include <iostream>

#include "rowpump/dispatcher/commands.hpp"
#include "rowpump/dispatcher/config.hpp"

namespace {

constexpr int kUsageError = 2;

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"rowpump: claims due rows in MySQL and feeds their ids to Redis lists"};
    app.require_subcommand(1);
    app.fallthrough();  // global options may follow the subcommand too
    app.set_version_flag("--version", "rowpump " ROWPUMP_VERSION);
    std::string config_file, log_level, queue;
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off (overrides log_level)")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
    auto with_config = [&](CLI::App* cmd) {
        cmd->add_option("-c,--config", config_file, "YAML config file")->required()->check(CLI::ExistingFile);
        return cmd;
    };

    auto* run = with_config(app.add_subcommand("run", "run the dispatcher until SIGTERM/SIGINT"));
    bool strict = false;
    auto* check = with_config(app.add_subcommand("check", "check the config, the servers and the tables"));
    check->add_flag("--strict", strict, "fail on warnings too");
    bool apply = false;
    auto* migrate = with_config(app.add_subcommand("migrate", "print (or apply) the ALTER TABLE statements"));
    migrate->add_flag("--apply", apply, "run them");
    std::string watch = "0ms";
    int count = 0;
    auto* status = with_config(app.add_subcommand("status", "show each queue's backlog and counters"));
    status->add_option("--watch", watch, "repeat at this interval, e.g. 1s");
    status->add_option("--count", count, "stop after this many repeats (default: until interrupted)")
        ->check(CLI::NonNegativeNumber);
    int limit = 100;
    auto* dead = with_config(app.add_subcommand("dead", "list a queue's dead rows"));
    dead->add_option("queue", queue, "queue name")->required();
    dead->add_option("--limit", limit, "at most this many rows (default 100)")->check(CLI::PositiveNumber);
    std::vector<std::string> ids;
    bool all = false;
    auto* retry = with_config(app.add_subcommand("retry", "make dead rows due again"));
    retry->add_option("queue", queue, "queue name")->required();
    retry->add_option("ids", ids, "row ids");
    retry->add_flag("--all", all, "every dead row of the queue");

    CLI11_PARSE(app, argc, argv);

    rowpump::Config config;
    try {
        config = rowpump::load_config(config_file);
    } catch (const rowpump::ConfigError& e) {
        std::cerr << "rowpump: config error: " << e.what() << "\n";
        return kUsageError;
    }
    rowpump::setup_logging(log_level.empty() ? config.log_level : log_level);

    const auto watch_interval = rowpump::parse_duration(watch);
    if (!watch_interval) {
        std::cerr << "rowpump: --watch: invalid duration '" << watch << "' (examples: 500ms, 1s)\n";
        return kUsageError;
    }
    if (*run) return rowpump::command_run(config);
    if (*check) return rowpump::command_check(config, strict, std::cout, std::cerr);
    if (*migrate) return rowpump::command_migrate(config, apply, std::cout, std::cerr);
    if (*status) return rowpump::command_status(config, *watch_interval, count, std::cout, std::cerr);
    if (*dead) return rowpump::command_dead(config, queue, limit, std::cout, std::cerr);
    return rowpump::command_retry(config, queue, ids, all, std::cout, std::cerr);
}
