#include "rowpump/testing/temp_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace rowpump::testing {

namespace {

bool g_test_failed = false;

}  // namespace

void set_current_test_failed(bool failed) {
    g_test_failed = failed;
}

bool current_test_failed() {
    return g_test_failed || std::uncaught_exceptions() > 0;
}

TempDir::TempDir(const std::string& prefix, Keep keep) : keep_(keep) {
    std::string pattern = "/tmp/" + prefix + "XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) {
        throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
    }
    path_ = buf.data();
}

TempDir::~TempDir() {
    bool keep = keep_ == Keep::on_failure &&
                (current_test_failed() || std::getenv("ROWPUMP_KEEP_TEST_DIRS") != nullptr);
    if (keep) {
        std::cerr << "test files kept in " << path_ << "\n";
        return;
    }
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::string file_tail(const std::string& path, std::size_t lines) {
    std::string text = read_file(path);
    std::size_t pos = text.size();
    if (pos > 0 && text[pos - 1] == '\n') --pos;
    if (pos == 0) return text;  // empty, or one empty line
    for (std::size_t n = 0; n < lines && pos > 0; ++n) {
        pos = text.rfind('\n', pos - 1);
        if (pos == std::string::npos) return text;
    }
    return text.substr(pos + 1);
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

}  // namespace rowpump::testing
