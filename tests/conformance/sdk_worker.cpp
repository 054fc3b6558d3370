#include "sdk_worker.hpp"

#include <sstream>

namespace rowpump::testing {

namespace {

std::vector<Sdk> known_sdks() {
    const std::vector<std::pair<std::string, std::string>> python_env{
        {"PYTHONPATH", ROWPUMP_PYTHON_SDK}, {"PYTHONDONTWRITEBYTECODE", "1"}};
    const std::string python_worker = std::string(ROWPUMP_PYTHON_SDK) + "/conformance_worker.py";
    std::vector<Sdk> sdks{
        {"cpp", {ROWPUMP_TEST_WORKER}, {}},
        {"python-thread", {ROWPUMP_PYTHON3, python_worker, "--mode", "thread"}, python_env},
        {"python-async", {ROWPUMP_PYTHON3, python_worker, "--mode", "async"}, python_env},
    };
#ifdef ROWPUMP_NODE_WORKER
    sdks.push_back({"node", {ROWPUMP_NODE, ROWPUMP_NODE_WORKER}, {}});
#endif
    return sdks;
}

std::vector<Sdk>& selection() {
    static std::vector<Sdk> selected = all_sdks();
    return selected;
}

}  // namespace

const std::vector<Sdk>& all_sdks() {
    static const std::vector<Sdk> sdks = known_sdks();
    return sdks;
}

const std::vector<Sdk>& selected_sdks() {
    return selection();
}

bool select_sdk(const std::string& name) {
    for (const auto& sdk : all_sdks()) {
        if (sdk.name == name) {
            selection() = {sdk};
            return true;
        }
    }
    return false;
}

std::vector<LoggedTask> read_logged_tasks(const std::string& path) {
    std::vector<LoggedTask> tasks;
    std::istringstream in(read_file(path));
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        LoggedTask task;
        if (!(words >> task.id >> task.token >> task.attempt)) continue;
        for (std::string field; words >> field;) task.fields.push_back(field);
        tasks.push_back(std::move(task));
    }
    return tasks;
}

std::vector<std::string> redis_flags(int port) {
    return {"--redis-host", "127.0.0.1", "--redis-port", std::to_string(port)};
}

SdkWorker::SdkWorker(const Sdk& sdk, const TempDir& dir, std::vector<std::string> redis,
                     std::string id, std::vector<std::string> flags, const std::string& queue,
                     const std::string& files)
    : id_(std::move(id)),
      log_(dir.file((files.empty() ? id_ : files) + ".tasks")),
      output_(dir.file((files.empty() ? id_ : files) + ".out")) {
    std::vector<std::string> argv = sdk.command;
    argv.insert(argv.end(), redis.begin(), redis.end());
    for (const std::string& flag : {std::string("--queue"), queue, std::string("--worker-id"), id_,
                                    std::string("--log"), log_}) {
        argv.push_back(flag);
    }
    argv.insert(argv.end(), flags.begin(), flags.end());
    SpawnOptions options;
    options.stdout_path = output_;
    options.env = sdk.env;
    process_ = std::make_unique<ChildProcess>(argv, options);
}

std::string SdkWorker::output() const {
    return read_file(output_);
}

}  // namespace rowpump::testing
