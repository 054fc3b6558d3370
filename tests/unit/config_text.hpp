#pragma once

// Config text for the config tests: the smallest valid config, with lines added to its queue.

#include <catch2/catch.hpp>

#include <string>

#include "rowpump/dispatcher/config/config.hpp"

namespace rowpump {

// Lines 1-3; a queue body starts on line 4.
inline const std::string kHead =
    "mysql: { user: rowpump, database: app }\n"
    "queues:\n"
    "  q:\n";
// Lines 4-6: the smallest valid queue. Lines added after it start on line 7.
inline const std::string kBody =
    "    table: jobs\n"
    "    id: job_id\n"
    "    due: \"status = 0\"\n";

inline std::string with_queue_lines(const std::string& lines) {
    return kHead + kBody + lines;
}

// The config `text` loads to; a ConfigError fails the test.
inline Config parsed(const std::string& text) {
    try {
        return parse_config(text, "test.yaml");
    } catch (const ConfigError& e) {
        FAIL(e.what());
        throw;
    }
}

}  // namespace rowpump
