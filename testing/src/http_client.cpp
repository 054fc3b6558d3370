#include "rowpump/testing/http_client.hpp"

#include <httplib.h>

#include <cmath>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace rowpump::testing {

namespace {

HttpResult result_of(const httplib::Result& r) {
    if (!r) return {};
    return {r->status, r->body};
}

httplib::Client client(int port) {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(5);
    c.set_read_timeout(10);
    return c;
}

}  // namespace

HttpResult http_get(int port, const std::string& path) {
    return result_of(client(port).Get(path.c_str()));
}

HttpResult http_post(int port, const std::string& path, const std::string& body,
                     const std::string& token) {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return result_of(client(port).Post(path.c_str(), headers, body, "application/json"));
}

Samples parse_prometheus(const std::string& text) {
    static const std::regex kType(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram))");
    static const std::regex kSample(
        R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+))");
    std::map<std::string, std::string> types;
    Samples samples;
    std::istringstream in(text);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        auto fail = [&](const std::string& why) {
            throw std::runtime_error("metrics line " + std::to_string(n) + ": " + why + ": " +
                                     line);
        };
        std::smatch m;
        if (std::regex_match(line, m, kType)) {
            if (types.count(m[1])) fail("second # TYPE");
            if (m[2] == "counter" && !std::regex_search(m[1].str(), std::regex("_total$")))
                fail("a counter's name must end in _total");
            types[m[1]] = m[2];
            continue;
        }
        if (line.rfind("# HELP ", 0) == 0) continue;
        if (!std::regex_match(line, m, kSample)) fail("not a sample");
        std::string family = m[1];
        for (const char* suffix : {"_bucket", "_sum", "_count"}) {
            const std::string s = suffix;
            if (!types.count(family) && family.size() > s.size() &&
                family.compare(family.size() - s.size(), s.size(), s) == 0)
                family.resize(family.size() - s.size());
        }
        if (!types.count(family)) fail("no # TYPE for " + family);
        std::size_t used = 0;
        const std::string value = m[4];
        double v = 0;
        try {
            v = value == "+Inf" ? HUGE_VAL : std::stod(value, &used);
        } catch (const std::exception&) {
            fail("bad value");
        }
        if (value != "+Inf" && used != value.size()) fail("bad value");
        if (!samples.emplace(m[1].str() + m[2].str(), v).second) fail("sample given twice");
    }
    return samples;
}

double sample(const Samples& samples, const std::string& series) {
    auto it = samples.find(series);
    if (it == samples.end()) throw std::runtime_error("no sample " + series);
    return it->second;
}

}  // namespace rowpump::testing
