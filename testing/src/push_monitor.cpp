#include "rowpump/testing/push_monitor.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace rowpump::testing {

namespace {

std::optional<std::string> parse_quoted(const std::string& text, std::size_t& pos) {
    if (pos >= text.size() || text[pos] != '"') return std::nullopt;
    std::string out;
    for (++pos; pos < text.size(); ++pos) {
        char c = text[pos];
        if (c == '"') {
            ++pos;
            return out;
        }
        if (c != '\\' || pos + 1 >= text.size()) {
            out += c;
            continue;
        }
        char e = text[++pos];
        if (e == 'x' && pos + 2 < text.size()) {
            out += static_cast<char>(std::stoi(text.substr(pos + 1, 2), nullptr, 16));
            pos += 2;
        } else {
            out += e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
        }
    }
    return std::nullopt;
}

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
    return s;
}

}  // namespace

std::optional<MonitorLine> parse_monitor_line(const std::string& text) {
    MonitorLine line;
    std::size_t dot = text.find('.');
    std::size_t open = text.find(" [");
    std::size_t close = text.find("] ");
    if (dot == std::string::npos || open == std::string::npos || close == std::string::npos ||
        dot > open || open > close) {
        return std::nullopt;
    }
    line.micros = std::stoll(text.substr(0, dot)) * 1000000 +
                  std::stoll(text.substr(dot + 1, open - dot - 1));
    line.source = text.substr(open + 2, close - open - 2);
    std::size_t pos = close + 2;
    while (pos < text.size()) {
        std::optional<std::string> arg = parse_quoted(text, pos);
        if (!arg) return std::nullopt;
        line.args.push_back(std::move(*arg));
        ++pos;  // the space between arguments
    }
    return line;
}

PushMonitor::PushMonitor(redis::Connection connection, std::string ready_key)
    : connection_(std::move(connection)), ready_key_(std::move(ready_key)) {
    if (connection_.command({"MONITOR"}).string() != "OK")
        throw std::runtime_error("MONITOR was refused");
}

bool PushMonitor::wait_for(std::size_t count, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const std::size_t target = pushes_.size() + count;
    while (pushes_.size() < target) {
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::milliseconds(0)) return false;
        // Past the deadline with no command at all, the read times out: nobody pushes.
        connection_.set_timeout(std::chrono::duration_cast<std::chrono::milliseconds>(left) +
                                std::chrono::milliseconds(100));
        std::string text;
        try {
            text = connection_.read_reply().string();
        } catch (const redis::IoError&) {
            if (std::chrono::steady_clock::now() < deadline) throw;
            return false;  // the connection is unusable now: later calls throw
        }
        const std::optional<MonitorLine> line = parse_monitor_line(text);
        if (!line) throw std::runtime_error("not a MONITOR line: " + text);
        if (line->source.find("lua") == std::string::npos)
            last_client_ = line->source.substr(line->source.find(' ') + 1);
        if (line->args.size() < 3 || upper(line->args[0]) != "RPUSH" || line->args[1] != ready_key_)
            continue;
        pushes_.push_back({line->micros, last_client_, {line->args.begin() + 2, line->args.end()}});
    }
    return true;
}

std::vector<std::string> PushMonitor::messages() const {
    std::vector<std::string> out;
    for (const auto& push : pushes_)
        out.insert(out.end(), push.messages.begin(), push.messages.end());
    return out;
}

std::int64_t PushMonitor::min_gap() const {
    std::int64_t gap = INT64_MAX;
    for (std::size_t i = 1; i < pushes_.size(); ++i)
        gap = std::min(gap, pushes_[i].micros - pushes_[i - 1].micros);
    return gap;
}

}  // namespace rowpump::testing
