#include "rowpump/dispatcher/cli/command_line.hpp"

namespace rowpump {

std::unique_ptr<CommandLine> make_command_line() {
    auto cl = std::make_unique<CommandLine>();
    auto& app = cl->app;
    app.require_subcommand(1);
    app.fallthrough();  // global options may follow the subcommand too
    app.set_version_flag("--version", "rowpump " ROWPUMP_VERSION);
    app.add_option("--log-level", cl->log_level,
                   "trace, debug, info, warn, error or off (overrides log_level)")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
    app.add_option("--log-format", cl->log_format,
                   "text (the default; with syslog priorities under systemd) or json")
        ->check(CLI::IsMember({"text", "json"}));
    auto with_config = [&](CLI::App* cmd) {
        cmd->add_option("-c,--config", cl->config_file, "YAML config file")
            ->required()
            ->check(CLI::ExistingFile);
        return cmd;
    };

    cl->run = with_config(app.add_subcommand("run", "run the dispatcher until SIGTERM/SIGINT"));
    cl->check =
        with_config(app.add_subcommand("check", "check the config, the servers and the tables"));
    cl->check->add_flag("--strict", cl->strict, "fail on warnings too");
    cl->migrate =
        with_config(app.add_subcommand("migrate", "print (or apply) the ALTER TABLE statements"));
    cl->migrate->add_flag("--apply", cl->apply, "run them");
    cl->migrate->add_option("--lock-wait", cl->lock_wait,
                            "give up when the table stays locked this long (default 5s)");
    cl->status =
        with_config(app.add_subcommand("status", "show each queue's backlog and counters"));
    cl->status->add_option("--watch", cl->watch, "repeat at this interval, e.g. 1s");
    cl->status
        ->add_option("--count", cl->count,
                     "stop after this many repeats (default: until interrupted)")
        ->check(CLI::NonNegativeNumber);
    cl->status->add_flag("--json", cl->json,
                         "one JSON object per queue and line instead of a table");
    cl->dead = with_config(app.add_subcommand("dead", "list a queue's dead rows"));
    cl->dead->add_option("queue", cl->queue, "queue name")->required();
    cl->dead->add_option("--limit", cl->limit, "at most this many rows (default 100)")
        ->check(CLI::PositiveNumber);
    cl->retry = with_config(app.add_subcommand("retry", "make dead rows due again"));
    cl->retry->add_option("queue", cl->queue, "queue name")->required();
    cl->retry->add_option("ids", cl->ids, "row ids");
    cl->retry->add_flag("--all", cl->all, "every dead row of the queue");
    cl->retry->add_option("--shard", cl->shard,
                          "the shard whose rows to revive (required for a queue with shards)");
    cl->retry->add_option(
        "--set", cl->set,
        "SET list applied to the rows, to make them due (e.g. \"status = 'pending'\")");
    cl->pause = with_config(app.add_subcommand("pause", "stop dispatching a queue"));
    cl->pause->add_option("queue", cl->queue, "queue name")->required();
    cl->resume = with_config(app.add_subcommand("resume", "dispatch a paused queue again"));
    cl->resume->add_option("queue", cl->queue, "queue name")->required();
    cl->limit_cmd = app.add_subcommand("limit", "set, unset or list per-key limits (group_by)");
    cl->limit_cmd->require_subcommand(1);
    cl->limit_set = with_config(
        cl->limit_cmd->add_subcommand("set", "set a key's rate, concurrency or weight"));
    cl->limit_set->add_option("queue", cl->queue, "queue name")->required();
    cl->limit_set->add_option("key", cl->key, "the key's value, as the group_by column reads")
        ->required();
    cl->limit_set
        ->add_option("limits", cl->limits,
                     "name value pairs: rate N/period, concurrency N, weight N")
        ->required();
    cl->limit_unset =
        with_config(cl->limit_cmd->add_subcommand("unset", "give a key the queue's limits again"));
    cl->limit_unset->add_option("queue", cl->queue, "queue name")->required();
    cl->limit_unset->add_option("key", cl->key, "the key's value")->required();
    cl->limit_list =
        with_config(cl->limit_cmd->add_subcommand("list", "list a queue's per-key limits"));
    cl->limit_list->add_option("queue", cl->queue, "queue name")->required();
    return cl;
}

}  // namespace rowpump
