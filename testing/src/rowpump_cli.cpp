#include "rowpump/testing/rowpump_cli.hpp"

#include <iostream>
#include <stdexcept>

#include "rowpump/testing/temp_dir.hpp"

namespace rowpump::testing {

std::string rowpump_exe() {
    return ROWPUMP_EXE;
}

RunResult rowpump_cli(std::vector<std::string> args, std::chrono::milliseconds timeout) {
    args.insert(args.begin(), ROWPUMP_EXE);
    return run_program(std::move(args), timeout);
}

void migrate_apply(const std::string& config) {
    RunResult r = rowpump_cli({"migrate", "-c", config, "--apply"});
    if (!r.status.success())
        throw std::runtime_error("rowpump migrate --apply failed: " + r.describe());
}

namespace {

SpawnOptions logging_to(const std::string& path,
                        std::vector<std::pair<std::string, std::string>> env) {
    auto options = log_to(path);
    options.env = std::move(env);
    return options;
}

}  // namespace

Dispatcher::Dispatcher(const std::string& config, std::string log_path,
                       std::vector<std::pair<std::string, std::string>> env)
    : log_path_(std::move(log_path)),
      process_({ROWPUMP_EXE, "run", "-c", config, "--log-level", "debug"},
               logging_to(log_path_, std::move(env))) {}

Dispatcher::~Dispatcher() {
    if (current_test_failed()) {
        std::cerr << "--- dispatcher log " << log_path_ << " (tail) ---\n" << log_tail() << "\n";
    }
}

std::string Dispatcher::log() const {
    return read_file(log_path_);
}
std::string Dispatcher::log_tail(std::size_t lines) const {
    return file_tail(log_path_, lines);
}
std::size_t Dispatcher::log_count(const std::string& text) const {
    const std::string log = this->log();
    std::size_t n = 0;
    for (auto at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++n;
    return n;
}

}  // namespace rowpump::testing
