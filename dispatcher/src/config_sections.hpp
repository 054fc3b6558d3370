#pragma once

// Sections of the config schema that live beside config.cpp: Redis, the HTTP endpoint and
// the due count. config.cpp calls these; README.md ("Configuration") documents them.

#include "rowpump/dispatcher/config.hpp"
#include "yaml_reader.hpp"

namespace rowpump {

RedisAddress read_redis(const yaml::Reader& r, const yaml::Item& item);
HttpConfig read_http(const yaml::Reader& r, const yaml::Item& item);
DueCountConfig read_due_count(const yaml::Reader& r, const yaml::Item& item);

// "host:port", "[v6]:port" or a bare port (then on loopback); false if it is none of those.
bool parse_listen(const std::string& text, std::string& host, int& port);

}  // namespace rowpump
