#pragma once

// Reading a YAML file into checked values: scalars with ${VAR} expanded, integers, ports,
// durations, and maps whose keys are all known and given once. Every problem is a ConfigError
// that points at the file, the line and the dotted key. config.cpp builds the rowpump schema
// on top of this; nothing here knows that schema.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "rowpump/common/duration.hpp"

namespace rowpump::yaml {

// The whole of `text`, in decimal; nullopt (with `out_of_range` set if that was the reason)
// otherwise.
std::optional<std::int64_t> parse_int(std::string_view text, bool& out_of_range);

// 1-based.
int line_of(const YAML::Node& node);

// How a value that has the wrong shape is named in an error: "a map", "'abc'".
std::string describe(const YAML::Node& node);

// The single document in `text` (a null node if there is none).
YAML::Node load(const std::string& text, const std::string& file);

// A node and its dotted key, e.g. "queues.users.batch".
struct Item {
    YAML::Node node;
    std::string key;
    int line = 0;  // when not 0, overrides the node's own line
};

int line_of(const Item& item);

// Turns YAML nodes into values, throwing a ConfigError that points at the node.
class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const Item& item, const std::string& problem) const;

    // Any scalar, ${VAR} expanded; `expected` names the wanted value in the error otherwise.
    std::string scalar(const Item& item, const std::string& expected) const;
    std::string string(const Item& item) const { return scalar(item, "a string"); }
    std::string nonempty_string(const Item& item) const;
    std::int64_t integer(const Item& item, std::int64_t min, std::int64_t max) const;
    int port(const Item& item) const { return static_cast<int>(integer(item, 1, 65535)); }
    // Positive and at most kMaxDuration.
    Millis positive_duration(const Item& item) const;

private:
    std::string file_;
};

// While one is alive on a thread, every Map built on that thread adds the dotted keys it
// accepts to it ("mysql.host", "queues.users.retry.base"), whether or not the file gives them:
// the schema as the parser itself knows it (config_keys_accepted).
class AcceptedKeys {
public:
    AcceptedKeys();
    ~AcceptedKeys();
    AcceptedKeys(const AcceptedKeys&) = delete;
    AcceptedKeys& operator=(const AcceptedKeys&) = delete;
    static void add(const std::string& key);
    const std::set<std::string>& keys() const { return keys_; }

private:
    std::set<std::string> keys_;
    AcceptedKeys* outer_;
};

// A YAML map whose keys are checked: all known, none twice.
class Map {
public:
    struct Entry {
        std::string name;
        Item key;  // the key node, for problems with the name itself
        Item value;
    };

    // `known` empty: any name is accepted (the map of queues).
    Map(const Reader& reader, Item self, std::vector<std::string_view> known,
        const std::string& expected = "a map");

    const Item& self() const { return self_; }
    const std::vector<Entry>& entries() const { return entries_; }

    std::optional<Item> get(std::string_view name) const;
    Item require(std::string_view name) const;

private:
    std::string child_key(std::string_view name) const;
    void add(const YAML::Node& key, const YAML::Node& value,
             const std::vector<std::string_view>& known);

    const Reader& reader_;
    Item self_;
    std::vector<Entry> entries_;
};

}  // namespace rowpump::yaml
