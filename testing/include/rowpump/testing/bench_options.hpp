#pragma once

// Command-line handling the benchmark programs share (CLI11, as the rowpump executable): the
// options they have in common are spelt, checked and explained once.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace rowpump::testing {

// Parses; on --help or a bad option prints what CLI11 prints and exits with its code.
void parse_or_exit(CLI::App& app, int argc, char** argv);

// --time-limit SECONDS: a backstop, so that a forgotten program never runs for ever.
CLI::Option* add_time_limit_option(CLI::App& app, int& seconds);
// --threads N, at least 1.
CLI::Option* add_threads_option(CLI::App& app, int& threads);
// --rows N: stop after this many rows are `done_means` (e.g. "pushed").
CLI::Option* add_rows_option(CLI::App& app, std::int64_t& rows, const std::string& done_means);

}  // namespace rowpump::testing
