#pragma once

// The `rowpump` command line: every subcommand, option and flag, as one CLI11 app. main.cpp
// parses with it; the docs drift test (tests/unit/test_docs_drift.cpp) walks it to check that
// docs/operations.md documents each one.

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "rowpump/dispatcher/cli/commands.hpp"

namespace rowpump {

struct CommandLine {
    CLI::App app{"rowpump: claims due rows in MySQL and feeds their ids to Redis lists"};
    // What parsing fills in.
    std::string config_file, log_level, log_format = "text", queue;
    bool strict = false;              // check
    bool apply = false;               // migrate
    std::string lock_wait = "5s";     // migrate
    std::string watch = "0ms";        // status
    int count = 0;                    // status
    bool json = false;                // status
    int limit = 100;                  // dead
    std::vector<std::string> ids;     // retry
    bool all = false;                 // retry
    std::string shard, set;           // retry
    std::string key;                  // limit
    std::vector<std::string> limits;  // limit set
    CLI::App *run = nullptr, *check = nullptr, *migrate = nullptr, *status = nullptr,
             *dead = nullptr, *retry = nullptr, *pause = nullptr, *resume = nullptr,
             *limit_cmd = nullptr, *limit_set = nullptr, *limit_unset = nullptr,
             *limit_list = nullptr;
};

// The app with every subcommand and option, bound to the returned object's fields.
std::unique_ptr<CommandLine> make_command_line();

}  // namespace rowpump
