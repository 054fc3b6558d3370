#include <signal.h>
#include <unistd.h>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <thread>

#include "rowpump/dispatcher/commands.hpp"
#include "rowpump/dispatcher/dispatcher.hpp"

namespace rowpump {

void setup_logging(const std::string& level) {
    auto logger = spdlog::stderr_logger_mt("rowpump");
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %l %v");
    logger->set_level(spdlog::level::from_str(level));
    logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(logger);
}

int command_run(const Config& config) {
    // Block the signals before any thread starts, so that only sigwait below sees them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    spdlog::info("rowpump dispatcher starting: {} queue(s), config {}", config.queues.size(), config.file);
    Dispatcher dispatcher(config);
    dispatcher.start();

    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("received {}; finishing the current batches (send it again to exit at once)", strsignal(sig));
    dispatcher.stop();
    std::thread([signals]() mutable {
        int again = 0;
        sigwait(&signals, &again);
        static const char kMessage[] = "rowpump: second signal, exiting at once\n";
        [[maybe_unused]] auto n = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
        _exit(1);
    }).detach();
    dispatcher.join();
    spdlog::info("rowpump dispatcher stopped");
    return 0;
}

}  // namespace rowpump
