#include "config/config_shared_tables.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace rowpump {

namespace {

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

// Where a queue's rows live: one table of one server (a queue with shards has several).
struct Place {
    std::string server;  // host:port/database
    std::string table;   // lower case: MariaDB's names are case-insensitive on most setups
    bool operator==(const Place& o) const { return server == o.server && table == o.table; }
};

std::vector<Place> places_of(const Config& config, const QueueConfig& queue) {
    std::vector<Place> places;
    for (const auto& source : queue_sources(config, queue)) {
        const auto& m = source.config.mysql;
        places.push_back(
            {m.host + ":" + std::to_string(m.port) + "/" + m.database, lower(source.queue.table)});
    }
    return places;
}

// The first bookkeeping column (or index) name two queues share, as "role 'name'", or "".
std::string shared_column(const ColumnNames& a, const ColumnNames& b) {
    const std::pair<const char*, const std::string*> roles_a[] = {
        {"token", &a.token}, {"lease", &a.lease}, {"attempts", &a.attempts},
        {"error", &a.error}, {"dead", &a.dead},   {"lease_index", &a.lease_index}};
    const std::string* names_b[] = {&b.token, &b.lease, &b.attempts,
                                    &b.error, &b.dead,  &b.lease_index};
    for (const auto& [role, name] : roles_a) {
        for (const auto* other : names_b) {
            if (lower(*name) == lower(*other)) return std::string(role) + " '" + *name + "'";
        }
    }
    return "";
}

}  // namespace

void check_shared_tables(const Config& config) {
    for (std::size_t j = 1; j < config.queues.size(); ++j) {
        const auto& later = config.queues[j];
        const auto later_places = places_of(config, later);
        for (std::size_t i = 0; i < j; ++i) {
            const auto& earlier = config.queues[i];
            const auto earlier_places = places_of(config, earlier);
            const auto place = std::find_first_of(later_places.begin(), later_places.end(),
                                                  earlier_places.begin(), earlier_places.end());
            if (place == later_places.end()) continue;
            const auto column = shared_column(later.columns, earlier.columns);
            if (column.empty()) continue;
            const std::string key = later.key_lines.count("columns") ? "columns" : "table";
            const auto line = later.key_lines.find(key);
            throw ConfigError(
                config.file, line == later.key_lines.end() ? 0 : line->second,
                "queues." + later.name + "." + key,
                "queue '" + earlier.name + "' uses the table '" + place->table +
                    "' too, with the " + column +
                    " column: queues on one table need bookkeeping columns of their own (give "
                    "this queue `columns:` with other names, e.g. { token: rp2_token, lease: "
                    "rp2_lease_until, attempts: rp2_attempts, error: rp2_last_error, dead: "
                    "rp2_dead_at, lease_index: rp2_lease_idx }, and run `rowpump migrate`), or "
                    "their claims, outcomes and dead rows mix");
        }
    }
}

}  // namespace rowpump
