#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <thread>

#include "rowpump/dispatcher/cli/commands.hpp"
#include "rowpump/dispatcher/cli/login_check.hpp"
#include "rowpump/dispatcher/loop/dispatcher.hpp"
#include "rowpump/dispatcher/mysql/statement_check.hpp"
#include "rowpump/dispatcher/observe/service_monitor.hpp"

namespace rowpump {

namespace {

// SQL from the config that MySQL refuses would fail every claim or outcome batch forever:
// better not to start. A MySQL that cannot be reached is waited out by the queues instead.
bool statements_prepare(const Config& config) {
    std::string unreachable;
    const auto problems = prepare_all_statements(config, unreachable);
    for (const auto& problem : problems) spdlog::error("config error: {}", problem);
    if (!unreachable.empty()) {
        spdlog::warn(
            "could not check the statements before starting ({}); starting anyway, the queues wait "
            "for MySQL",
            unreachable);
    }
    return problems.empty();
}

}  // namespace

int command_run(const Config& config) {
    // Block the signals before any thread starts, so that only sigwait below sees them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    spdlog::info("rowpump dispatcher starting: {} queue(s), config {}", config.queues.size(),
                 config.file);
    if (auto refusal = refused_login(config)) {
        spdlog::critical("{}; exiting", *refusal);
        return kLoginRefusedExit;
    }
    if (!statements_prepare(config)) return 2;
    Dispatcher dispatcher(config);
    try {
        dispatcher.start();
    } catch (const std::runtime_error& e) {
        spdlog::critical("{}", e.what());
        return 1;
    }
    ServiceMonitor monitor(SystemdNotifier::from_environment(), dispatcher.health());
    monitor.start();

    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("received {}; finishing the current batches (send it again to exit at once)",
                 strsignal(sig));
    monitor.stopping();
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
