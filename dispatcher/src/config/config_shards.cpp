// A queue's `shards:` (config_sections.hpp): the MySQL sources of one queue.

#include <set>
#include <tuple>

#include "config/config_columns.hpp"
#include "config/config_sections.hpp"
#include "rowpump/common/protocol/protocol.hpp"

namespace rowpump {

namespace {

using yaml::Item;
using yaml::Map;
using yaml::Reader;

ShardConfig read_shard(const Reader& r, const Item& item, const MysqlConfig& base,
                       const std::string& table) {
    Map map(r, item, {"name", "mysql", "table"});
    ShardConfig shard;
    const Item name = map.require("name");
    shard.name = r.nonempty_string(name);
    if (!protocol::is_valid_name(shard.name)) {
        r.fail(name, "invalid shard name '" + shard.name +
                         "' (1 to 64 characters from A-Z a-z 0-9 _ . -)");
    }
    shard.mysql = base;
    if (auto v = map.get("mysql")) shard.mysql = read_mysql(r, *v, &base);
    shard.table = table;
    if (auto v = map.get("table")) shard.table = read_identifier(r, *v);
    return shard;
}

}  // namespace

std::vector<ShardConfig> read_shards(const Reader& r, const Item& item, const MysqlConfig& base,
                                     const std::string& table) {
    if (!item.node.IsSequence() || item.node.size() == 0) {
        r.fail(item, "must be a list of shards ({name: ..., mysql: {...}}), got " +
                         yaml::describe(item.node));
    }
    if (item.node.size() > protocol::kMaxShards) {
        r.fail(item, "must list at most " + std::to_string(protocol::kMaxShards) + " shards, got " +
                         std::to_string(item.node.size()));
    }
    std::vector<ShardConfig> shards;
    std::set<std::string> names;
    std::set<std::tuple<std::string, int, std::string, std::string>> sources;
    for (std::size_t i = 0; i < item.node.size(); ++i) {
        const Item entry{item.node[i], item.key + "[" + std::to_string(i) + "]"};
        auto shard = read_shard(r, entry, base, table);
        if (!names.insert(shard.name).second) {
            r.fail(entry, "shard name '" + shard.name + "' is given twice");
        }
        if (!sources.emplace(shard.mysql.host, shard.mysql.port, shard.mysql.database, shard.table)
                 .second) {
            r.fail(entry, "shard '" + shard.name + "' has the same server, database and table (" +
                              shard.mysql.host + ":" + std::to_string(shard.mysql.port) + "/" +
                              shard.mysql.database + "." + shard.table +
                              ") as another shard: its rows would be claimed twice");
        }
        shards.push_back(std::move(shard));
    }
    return shards;
}

}  // namespace rowpump
