#pragma once

// The main loop of the worker programs the benchmarks and the chaos run start: SIGTERM,
// SIGINT or the time limit (SIGALRM, a backstop so that a forgotten worker never runs for
// ever) stop fetching, let the tasks in hand finish and end the program. Header-only:
// rowpump_testing does not link the worker SDK, the programs do.

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <exception>
#include <iostream>
#include <string>
#include <thread>

#include "rowpump/worker.hpp"

namespace rowpump::testing {

// Blocks the stop signals and arms the time limit. Call it before any thread starts (before
// the Worker is built), so that only serve_until_signal() receives them.
inline sigset_t block_stop_signals(int time_limit_s) {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    alarm(static_cast<unsigned>(time_limit_s));
    return signals;
}

// Runs `handler` until a stop signal, or until run() ends on its own; returns the exit code:
// 0, or 1 if run() threw (its message goes to stderr after `program`).
inline int serve_until_signal(Worker& worker, const Handler& handler, const sigset_t& signals,
                              const std::string& program) {
    int exit_code = 0;
    std::thread runner([&] {
        try {
            worker.run(handler);
        } catch (const std::exception& e) {
            std::cerr << program << ": " << e.what() << "\n";
            exit_code = 1;
        }
        kill(getpid(), SIGTERM);  // run() returned on its own: wake the main thread
    });
    int signal = 0;
    sigwait(&signals, &signal);
    worker.stop();
    runner.join();
    return exit_code;
}

}  // namespace rowpump::testing
