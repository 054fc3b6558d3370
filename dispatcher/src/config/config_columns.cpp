#include "config/config_columns.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>
#include <vector>

namespace rowpump {

namespace {

using yaml::Item;
using yaml::Map;
using yaml::Reader;

// A column name and where it came from; `given` is false for a default.
struct NamedColumn {
    std::string name;
    Item at;
    bool given;
};

bool same_column(const std::string& a, const std::string& b) {
    // MySQL column names are case-insensitive.
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

// The bookkeeping columns must not collide with each other or with the id column, or
// rowpump would overwrite the user's data.
void check_distinct(const Reader& r, const std::vector<NamedColumn>& columns) {
    for (std::size_t j = 1; j < columns.size(); ++j) {
        for (std::size_t i = 0; i < j; ++i) {
            if (!same_column(columns[i].name, columns[j].name)) continue;
            const auto& at = columns[j].given ? columns[j] : columns[i];
            const auto& other = columns[j].given ? columns[i] : columns[j];
            r.fail(at.at, "column '" + at.name + "' is already used by " + other.at.key +
                              (other.given ? "" : " (its default)"));
        }
    }
}

// The names each SQL key of the queue uses, by key.
std::vector<std::pair<std::string, std::vector<std::string>>> names_in_sql(
    const QueueConfig& queue) {
    std::vector<std::pair<std::string, std::vector<std::string>>> uses;
    uses.emplace_back("due", queue.due.names);
    std::vector<std::string> order;
    for (const auto& term : queue.order_by) order.push_back(term.column);
    uses.emplace_back("order_by", std::move(order));
    if (!queue.group_by.empty()) uses.emplace_back("group_by", std::vector{queue.group_by});
    if (queue.on_success) uses.emplace_back("on_success", queue.on_success->names);
    if (queue.on_dead) uses.emplace_back("on_dead", queue.on_dead->names);
    return uses;
}

// A bookkeeping column is rowpump's alone: `columns: {token: done}` with `due: "done = 0"`
// would let every claim change which rows are due, and an on_success that wrote the lease
// column would undo the claim's fencing.
void check_unused_by_sql(const Reader& r, const Map& map, const QueueConfig& queue,
                         const std::vector<NamedColumn>& columns) {
    for (const auto& [key, names] : names_in_sql(queue)) {
        for (const auto& column : columns) {
            auto used = [&](const std::string& name) { return same_column(name, column.name); };
            if (std::none_of(names.begin(), names.end(), used)) continue;
            const std::string sql_key = map.self().key + "." + key;
            if (column.given) {
                r.fail(column.at, "column '" + column.name + "' is used by " + sql_key +
                                      "; a bookkeeping column must be one no SQL of the queue "
                                      "uses");
            }
            r.fail(*map.get(key), "uses the bookkeeping column '" + column.name + "' (" +
                                      column.at.key +
                                      ", its default); name a column of your own, or give "
                                      "that bookkeeping column another name");
        }
    }
}

}  // namespace

std::string read_identifier(const Reader& r, const Item& item) {
    auto text = r.string(item);
    if (!is_plain_identifier(text)) {
        r.fail(item, "'" + text +
                         "' is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_$]*, at most "
                         "64 characters)");
    }
    return text;
}

void read_columns(const Reader& r, const Map& queue_map, QueueConfig& queue) {
    std::vector<std::pair<std::string_view, std::string*>> fields = {
        {"token", &queue.columns.token},       {"lease", &queue.columns.lease},
        {"attempts", &queue.columns.attempts}, {"error", &queue.columns.error},
        {"dead", &queue.columns.dead},         {"lease_index", &queue.columns.lease_index}};
    std::optional<Map> map;
    if (auto item = queue_map.get("columns")) {
        map.emplace(r, *item,
                    std::vector<std::string_view>{"token", "lease", "attempts", "error", "dead",
                                                  "lease_index"});
    }
    // Built by push_back alone: assigning a YAML::Node (as inserting in the middle would)
    // rewrites the node it referred to.
    std::vector<NamedColumn> columns{{queue.id, queue_map.require("id"), true}};
    for (auto& [name, target] : fields) {
        auto given = map ? map->get(name) : std::nullopt;
        if (given) *target = read_identifier(r, *given);
        if (name == "lease_index") continue;  // an index name, not a column
        const auto& self = queue_map.self();
        Item at = given ? *given : Item{self.node, self.key + ".columns." + std::string(name)};
        columns.push_back({*target, at, given.has_value()});
    }
    check_unused_by_sql(r, queue_map, queue, {columns.begin() + 1, columns.end()});
    check_distinct(r, columns);
}

}  // namespace rowpump
