#pragma once

// Per-test scratch directories under /tmp. A directory is removed when its owner goes away,
// unless the running test case has failed: then it is kept (and its path printed) so the
// server and dispatcher logs inside can be read.

#include <string>

namespace rowpump::testing {

class TempDir {
public:
    // mkdtemp("/tmp/<prefix>XXXXXX"); throws std::runtime_error on failure.
    enum class Keep { on_failure, never };
    explicit TempDir(const std::string& prefix = "rowpump-test-", Keep keep = Keep::on_failure);
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
    Keep keep_;
};

// True once an assertion of the running test case has failed, as the Catch listener of
// rowpump_testing_catch reports (never in programs without it), or while an exception unwinds.
bool current_test_failed();
void set_current_test_failed(bool failed);

// Whole file as text; empty when it cannot be read.
std::string read_file(const std::string& path);
// The last `lines` lines of a file, for failure messages.
std::string file_tail(const std::string& path, std::size_t lines = 30);
void write_file(const std::string& path, const std::string& text);

}  // namespace rowpump::testing
