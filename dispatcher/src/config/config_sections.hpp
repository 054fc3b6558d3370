#pragma once

// Sections of the config schema that live beside config.cpp: MySQL TLS, Redis, the HTTP
// endpoint, the due count, a queue's shards and its payload. config.cpp calls these;
// docs/configuration.md
// ("Configuration") documents them.

#include "config/yaml_reader.hpp"
#include "rowpump/dispatcher/config/config.hpp"

namespace rowpump {

// A `mysql:` map. With `base`, every key is optional and overrides base's (a shard's server);
// without, `user` and `database` are required.
MysqlConfig read_mysql(const yaml::Reader& r, const yaml::Item& item,
                       const MysqlConfig* base = nullptr);
// A `tls:` map under `mysql:` (config_mysql_tls.cpp); its files must be readable now.
MysqlTls read_mysql_tls(const yaml::Reader& r, const yaml::Item& item);
RedisAddress read_redis(const yaml::Reader& r, const yaml::Item& item);
HttpConfig read_http(const yaml::Reader& r, const yaml::Item& item);
DueCountConfig read_due_count(const yaml::Reader& r, const yaml::Item& item);
// A queue's `shards:` list; `base` is the top-level mysql each shard's mysql keys override,
// `table` the queue's table.
std::vector<ShardConfig> read_shards(const yaml::Reader& r, const yaml::Item& item,
                                     const MysqlConfig& base, const std::string& table);

// A queue's `payload:` list: plain identifiers that are also field names of the ready message,
// none twice (config_payload.cpp).
std::vector<std::string> read_payload(const yaml::Reader& r, const yaml::Item& item);
// `payload_max:` 4096 or 4KiB: from kMinPayloadMax to protocol::kMaxMessageBytes.
std::int64_t read_payload_max(const yaml::Reader& r, const yaml::Item& item);

// "host:port", "[v6]:port" or a bare port (then on loopback); false if it is none of those.
bool parse_listen(const std::string& text, std::string& host, int& port);

}  // namespace rowpump
