#pragma once

#include "rowpump/worker.hpp"

namespace rowpump::details {

// Checks the options and fills in defaults (worker id, heartbeat interval); throws Error
// with a message that names the option.
WorkerOptions validated(WorkerOptions options);

// <hostname>-<pid>-<6 random hex digits>, with the hostname cut down to what a key allows.
std::string default_worker_id();

}  // namespace rowpump::details
