#pragma once

// The SDKs under the conformance suite and their conformance workers as child processes.
// Every SDK ships a program that takes the same flags (tests/tools/test_worker.cpp documents
// them) and writes the same task log, so one scenario drives each of them alike.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rowpump/common/redis/redis.hpp"
#include "rowpump/testing/process.hpp"
#include "rowpump/testing/temp_dir.hpp"

namespace rowpump::testing {

struct Sdk {
    std::string name;                  // in test names: "conformance: <scenario> [<name>]"
    std::vector<std::string> command;  // the conformance worker, before its flags
    std::vector<std::pair<std::string, std::string>> env;
};

// Every SDK this build knows (Node only when its conformance worker was there at configure
// time), and those this run covers: all of them, or the one chosen with --sdk.
const std::vector<Sdk>& all_sdks();
const std::vector<Sdk>& selected_sdks();
bool select_sdk(const std::string& name);  // false: no such SDK

// One line of a task log: "<id> <token> <attempt>[ <name>[=<value>]]...", the id and the
// values percent-encoded as on the wire.
struct LoggedTask {
    std::string id;  // percent-encoded
    std::string token;
    int attempt = 0;
    std::vector<std::string> fields;  // "name=value" or "name", as written
};
std::vector<LoggedTask> read_logged_tasks(const std::string& path);

// A conformance worker on `queue`, its task log and output in `dir`; SIGKILLed when
// destroyed if still running.
class SdkWorker {
public:
    // `redis` names the Redis: {"--redis-host", H, "--redis-port", P} or Sentinel flags.
    // `files`: the name of its task log and output in `dir` (default: the worker id), for
    // several processes under one worker id.
    SdkWorker(const Sdk& sdk, const TempDir& dir, std::vector<std::string> redis, std::string id,
              std::vector<std::string> flags, const std::string& queue = "users",
              const std::string& files = "");

    const std::string& id() const { return id_; }
    ChildProcess& process() { return *process_; }
    std::vector<LoggedTask> handled() const { return read_logged_tasks(log_); }
    std::string output() const;

private:
    std::string id_;
    std::string log_;
    std::string output_;
    std::unique_ptr<ChildProcess> process_;
};

// {"--redis-host", "127.0.0.1", "--redis-port", port}
std::vector<std::string> redis_flags(int port);

}  // namespace rowpump::testing
