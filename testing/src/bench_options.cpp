#include "rowpump/testing/bench_options.hpp"

#include <cstdlib>

namespace rowpump::testing {

void parse_or_exit(CLI::App& app, int argc, char** argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        std::exit(app.exit(e));
    }
}

CLI::Option* add_time_limit_option(CLI::App& app, int& seconds) {
    return app.add_option("--time-limit", seconds, "seconds");
}

CLI::Option* add_threads_option(CLI::App& app, int& threads) {
    return app.add_option("--threads", threads)->check(CLI::PositiveNumber);
}

CLI::Option* add_rows_option(CLI::App& app, std::int64_t& rows, const std::string& done_means) {
    return app.add_option("--rows", rows, "stop after this many rows are " + done_means);
}

}  // namespace rowpump::testing
