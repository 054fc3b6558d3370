#pragma once

// Talking to the dispatcher's HTTP endpoint from tests: plain requests, and the Prometheus
// text format parsed and checked line by line.

#include <map>
#include <string>

namespace rowpump::testing {

struct HttpResult {
    int status = 0;  // 0: no answer (connection refused, timeout)
    std::string body;
};

HttpResult http_get(int port, const std::string& path);
// POST with a JSON body and, unless `token` is empty, "Authorization: Bearer <token>".
HttpResult http_post(int port, const std::string& path, const std::string& body,
                     const std::string& token);

// Samples of a /metrics answer: "name{labels}" (labels as written) -> value. Throws
// std::runtime_error naming the line for anything that is not the text format: a sample
// without a # TYPE before it, a bad name or value, a counter whose name lacks _total.
using Samples = std::map<std::string, double>;
Samples parse_prometheus(const std::string& text);
// The value of `series` ("rowpump_dispatched_total{queue=\"users\"}"); throws if absent.
double sample(const Samples& samples, const std::string& series);

}  // namespace rowpump::testing
