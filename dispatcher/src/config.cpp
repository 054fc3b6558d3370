#include "rowpump/dispatcher/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "rowpump/common/protocol.hpp"

namespace rowpump {

namespace {

std::string compose_message(const std::string& file, int line, const std::string& key,
                            const std::string& problem) {
    std::string out = file + ":" + std::to_string(line) + ": ";
    if (!key.empty()) out += key + ": ";
    return out + problem;
}

bool is_env_name(std::string_view name) {
    auto letter = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    };
    return !name.empty() && letter(name[0]) && std::all_of(name.begin(), name.end(), [&](char c) {
        return letter(c) || (c >= '0' && c <= '9');
    });
}

// Replaces ${VAR} by the environment variable VAR and $$ by $. Any other '$' stays as it
// is, so that a password like "pa$word" needs no escaping.
std::optional<std::string> expand_env(std::string_view text, std::string& error) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char next = i + 1 < text.size() ? text[i + 1] : '\0';
        if (text[i] != '$' || (next != '$' && next != '{')) {
            out += text[i];
            continue;
        }
        if (next == '$') {
            out += '$';
            ++i;
            continue;
        }
        auto close = text.find('}', i + 2);
        if (close == std::string_view::npos) {
            error = "unterminated '${' (write $$ for a literal $)";
            return std::nullopt;
        }
        std::string name(text.substr(i + 2, close - i - 2));
        if (!is_env_name(name)) {
            error = "'${" + name + "}' is not a valid environment variable reference";
            return std::nullopt;
        }
        const char* value = std::getenv(name.c_str());
        if (value == nullptr) {
            error = "environment variable " + name + " is not set";
            return std::nullopt;
        }
        out += value;
        i = close;
    }
    return out;
}

std::optional<std::int64_t> parse_int(std::string_view text, bool& out_of_range) {
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    out_of_range = ec == std::errc::result_out_of_range;
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

int line_of(const YAML::Node& node) {
    const auto mark = node.Mark();
    return mark.is_null() ? 1 : mark.line + 1;
}

std::string describe(const YAML::Node& node) {
    if (node.IsMap()) return "a map";
    if (node.IsSequence()) return "a list";
    if (node.IsNull()) return "nothing";
    return "'" + node.Scalar() + "'";
}

// A node and its dotted key, e.g. "queues.users.batch".
struct Item {
    YAML::Node node;
    std::string key;
    int line = 0;  // when not 0, overrides the node's own line
};

int line_of(const Item& item) {
    return item.line != 0 ? item.line : line_of(item.node);
}

// Turns YAML nodes into values, throwing a ConfigError that points at the node.
class Reader {
  public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const Item& item, const std::string& problem) const {
        throw ConfigError(file_, line_of(item), item.key, problem);
    }

    std::string scalar(const Item& item, const std::string& expected) const {
        if (!item.node.IsScalar())
            fail(item, "must be " + expected + ", got " + describe(item.node));
        std::string error;
        auto text = expand_env(item.node.Scalar(), error);
        if (!text) fail(item, error);
        return std::move(*text);
    }

    std::string string(const Item& item) const { return scalar(item, "a string"); }

    std::string nonempty_string(const Item& item) const {
        auto text = string(item);
        if (text.empty()) fail(item, "must not be empty");
        return text;
    }

    std::int64_t integer(const Item& item, std::int64_t min, std::int64_t max) const {
        auto text = scalar(item, "an integer");
        bool out_of_range = false;
        auto value = parse_int(text, out_of_range);
        if (!value && !out_of_range) fail(item, "must be an integer, got '" + text + "'");
        if (!value || *value < min || *value > max) {
            fail(item,
                 (max == std::numeric_limits<std::int64_t>::max()
                      ? "must be at least " + std::to_string(min)
                      : "must be between " + std::to_string(min) + " and " + std::to_string(max)) +
                     ", got " + text);
        }
        return *value;
    }

    int port(const Item& item) const { return static_cast<int>(integer(item, 1, 65535)); }

    Millis positive_duration(const Item& item) const {
        auto text = scalar(item, "a duration");
        auto value = parse_duration(text);
        if (!value) fail(item, "must be a duration like 250ms, 10s or 5m, got '" + text + "'");
        if (value->count() <= 0) fail(item, "must be positive, got '" + text + "'");
        return *value;
    }

    std::string identifier(const Item& item) const {
        auto text = string(item);
        if (!is_plain_identifier(text)) {
            fail(item, "'" + text +
                           "' is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_$]*, at most "
                           "64 characters)");
        }
        return text;
    }

    SqlFragment fragment(const Item& item) const {
        std::string error;
        auto fragment = parse_fragment(string(item), error);
        if (!fragment) fail(item, error);
        return std::move(*fragment);
    }

    // A fragment into which no worker values are bound.
    SqlFragment fragment_without_placeholders(const Item& item) const {
        auto result = fragment(item);
        if (!result.placeholders.empty()) {
            fail(item, "must not contain placeholders, found ':" + result.placeholders[0] + "'");
        }
        return result;
    }

  private:
    std::string file_;
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
        const std::string& expected = "a map")
        : reader_(reader), self_(std::move(self)) {
        if (!self_.node.IsMap())
            reader_.fail(self_, "must be " + expected + ", got " + describe(self_.node));
        for (const auto& kv : self_.node) add(kv.first, kv.second, known);
    }

    const Item& self() const { return self_; }
    const std::vector<Entry>& entries() const { return entries_; }

    std::optional<Item> get(std::string_view name) const {
        for (const auto& entry : entries_) {
            if (entry.name == name) return entry.value;
        }
        return std::nullopt;
    }

    Item require(std::string_view name) const {
        auto item = get(name);
        if (!item) reader_.fail({self_.node, child_key(name), self_.line}, "is required");
        return *item;
    }

  private:
    std::string child_key(std::string_view name) const {
        return self_.key.empty() ? std::string(name) : self_.key + "." + std::string(name);
    }

    void add(const YAML::Node& key, const YAML::Node& value,
             const std::vector<std::string_view>& known) {
        if (!key.IsScalar())
            reader_.fail({key, self_.key}, "keys must be strings, got " + describe(key));
        const auto name = key.Scalar();
        // A missing value ("key:" and nothing) is placed by yaml-cpp where the next token
        // starts, possibly lines below: point at the key instead.
        const int value_line = value.IsNull() ? line_of(key) : 0;
        Entry entry{name, {key, child_key(name)}, {value, child_key(name), value_line}};
        if (!known.empty() && std::find(known.begin(), known.end(), entry.name) == known.end()) {
            std::string list;
            for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
            reader_.fail(entry.key, "unknown key (expected one of: " + list + ")");
        }
        for (const auto& other : entries_) {
            if (other.name == entry.name) {
                reader_.fail(entry.key, "given twice (first at line " +
                                            std::to_string(line_of(other.key.node)) + ")");
            }
        }
        entries_.push_back(std::move(entry));
    }

    const Reader& reader_;
    Item self_;
    std::vector<Entry> entries_;
};

MysqlConfig read_mysql(const Reader& r, const Item& item) {
    Map map(r, item, {"host", "port", "user", "password", "database", "connect_timeout"});
    MysqlConfig mysql;
    if (auto v = map.get("host")) mysql.host = r.nonempty_string(*v);
    if (auto v = map.get("port")) mysql.port = r.port(*v);
    mysql.user = r.nonempty_string(map.require("user"));
    if (auto v = map.get("password")) mysql.password = r.string(*v);
    mysql.database = r.nonempty_string(map.require("database"));
    if (auto v = map.get("connect_timeout")) mysql.connect_timeout = r.positive_duration(*v);
    return mysql;
}

RedisConfig read_redis(const Reader& r, const Item& item) {
    Map map(r, item, {"host", "port", "user", "password", "connect_timeout"});
    RedisConfig redis;
    if (auto v = map.get("host")) redis.host = r.nonempty_string(*v);
    if (auto v = map.get("port")) redis.port = r.port(*v);
    if (auto v = map.get("user")) redis.user = r.string(*v);
    if (auto v = map.get("password")) redis.password = r.string(*v);
    if (auto v = map.get("connect_timeout")) redis.connect_timeout = r.positive_duration(*v);
    return redis;
}

Rate read_rate(const Reader& r, const Item& item) {
    auto text = r.scalar(item, "a rate like 1/3s");
    auto rate = parse_rate(text);
    if (!rate) r.fail(item, "must be a rate like 1/3s, 500/1s or 10/s, got '" + text + "'");
    if (rate->count < 1)
        r.fail(item, "must allow at least 1 dispatch per period, got '" + text + "'");
    if (rate->per.count() <= 0) r.fail(item, "must have a positive period, got '" + text + "'");
    return *rate;
}

// Checks that `high` (e.g. retry.cap) is not below `low` (retry.base); either may be a
// default, and the problem is reported where the file sets one of them.
void check_not_below(const Reader& r, const Map& map, std::string_view low_name, Millis low,
                     std::string_view high_name, Millis high) {
    if (high >= low) return;
    const auto& key = map.self().key;
    const std::string section = key.substr(key.rfind('.') + 1) + ".";
    if (auto v = map.get(high_name)) {
        r.fail(*v, "must be at least " + section + std::string(low_name) + " (" +
                       format_duration(low) + "), got " + format_duration(high));
    }
    r.fail(map.require(low_name), "must be at most " + section + std::string(high_name) + " (" +
                                      format_duration(high) + ", the default), got " +
                                      format_duration(low));
}

RetryConfig read_retry(const Reader& r, const Item& item) {
    Map map(r, item, {"base", "cap", "max_attempts"});
    RetryConfig retry;
    if (auto v = map.get("base")) retry.base = r.positive_duration(*v);
    if (auto v = map.get("cap")) retry.cap = r.positive_duration(*v);
    check_not_below(r, map, "base", retry.base, "cap", retry.cap);
    if (auto v = map.get("max_attempts")) {
        retry.max_attempts = static_cast<int>(r.integer(*v, 1, std::numeric_limits<int>::max()));
    }
    return retry;
}

void read_poll(const Reader& r, const Item& item, QueueConfig& queue) {
    Map map(r, item, {"min", "max"});
    if (auto v = map.get("min")) queue.poll_min = r.positive_duration(*v);
    if (auto v = map.get("max")) queue.poll_max = r.positive_duration(*v);
    check_not_below(r, map, "min", queue.poll_min, "max", queue.poll_max);
}

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

void read_columns(const Reader& r, const Item& queue_item, const std::optional<Item>& item,
                  const Item& id_item, QueueConfig& queue) {
    std::vector<std::pair<std::string_view, std::string*>> fields = {
        {"token", &queue.columns.token},       {"lease", &queue.columns.lease},
        {"attempts", &queue.columns.attempts}, {"error", &queue.columns.error},
        {"dead", &queue.columns.dead},         {"lease_index", &queue.columns.lease_index}};
    std::optional<Map> map;
    if (item)
        map.emplace(r, *item,
                    std::vector<std::string_view>{"token", "lease", "attempts", "error", "dead",
                                                  "lease_index"});
    std::vector<NamedColumn> columns{{queue.id, id_item, true}};
    for (auto& [name, target] : fields) {
        auto given = map ? map->get(name) : std::nullopt;
        if (given) *target = r.identifier(*given);
        if (name == "lease_index") continue;  // an index name, not a column
        Item at = given ? *given
                        : Item{queue_item.node, queue_item.key + ".columns." + std::string(name)};
        columns.push_back({*target, at, given.has_value()});
    }
    check_distinct(r, columns);
}

const std::vector<std::string_view> kQueueKeys = {
    "table", "id",         "due",     "order_by", "batch", "lease",         "max_backlog",
    "rate",  "on_success", "on_dead", "retry",    "poll",  "reap_interval", "columns"};

// table, id, due, order_by, on_success, on_dead: what goes into SQL text.
void read_queue_sql(const Reader& r, const Map& map, QueueConfig& queue) {
    queue.table = r.identifier(map.require("table"));
    queue.id = r.identifier(map.require("id"));
    queue.due = r.fragment_without_placeholders(map.require("due"));
    if (auto v = map.get("order_by")) {
        std::string error;
        auto terms = parse_order_by(r.string(*v), error);
        if (!terms) r.fail(*v, error);
        queue.order_by = std::move(*terms);
    }
    if (auto v = map.get("on_success")) {
        queue.on_success = r.fragment(*v);
        for (const auto& name : queue.on_success->placeholders) {
            if (!protocol::is_valid_value_name(name)) {
                r.fail(*v, "placeholder ':" + name + "' is longer than 64 characters");
            }
        }
    }
    if (auto v = map.get("on_dead")) queue.on_dead = r.fragment_without_placeholders(*v);
}

// batch, lease, max_backlog, rate, retry, poll, reap_interval: how fast and how much.
void read_queue_pacing(const Reader& r, const Map& map, QueueConfig& queue) {
    if (auto v = map.get("batch")) queue.batch = static_cast<int>(r.integer(*v, 1, 100000));
    if (auto v = map.get("lease")) queue.lease = r.positive_duration(*v);
    if (auto v = map.get("max_backlog")) {
        queue.max_backlog = r.integer(*v, 1, std::numeric_limits<std::int64_t>::max());
    }
    if (auto v = map.get("rate")) queue.rate = read_rate(r, *v);
    if (auto v = map.get("retry")) queue.retry = read_retry(r, *v);
    if (auto v = map.get("poll")) read_poll(r, *v, queue);
    if (auto v = map.get("reap_interval")) queue.reap_interval = r.positive_duration(*v);
}

QueueConfig read_queue(const Reader& r, const Map::Entry& entry) {
    if (!protocol::is_valid_name(entry.name)) {
        r.fail(entry.key, "invalid queue name '" + entry.name +
                              "' (1 to 64 characters from A-Z a-z 0-9 _ . -)");
    }
    Map map(r, entry.value, kQueueKeys);
    QueueConfig queue;
    queue.name = entry.name;
    read_queue_sql(r, map, queue);
    read_queue_pacing(r, map, queue);
    read_columns(r, map.self(), map.get("columns"), map.require("id"), queue);
    return queue;
}

std::vector<QueueConfig> read_queues(const Reader& r, const Item& item) {
    Map map(r, item, {}, "a map of queue names to queue settings");
    if (map.entries().empty()) r.fail(item, "must define at least one queue");
    std::vector<QueueConfig> queues;
    for (const auto& entry : map.entries()) queues.push_back(read_queue(r, entry));
    return queues;
}

std::string read_log_level(const Reader& r, const Item& item) {
    auto level = r.string(item);
    for (const char* known : {"trace", "debug", "info", "warn", "error", "off"}) {
        if (level == known) return level;
    }
    r.fail(item, "must be one of trace, debug, info, warn, error, off; got '" + level + "'");
}

YAML::Node load_yaml(const std::string& text, const std::string& file) {
    std::vector<YAML::Node> documents;
    try {
        documents = YAML::LoadAll(text);
    } catch (const YAML::Exception& e) {
        throw ConfigError(file, e.mark.is_null() ? 1 : e.mark.line + 1, "",
                          "invalid YAML: " + e.msg);
    }
    if (documents.size() > 1) {
        throw ConfigError(file, line_of(documents[1]), "", "holds more than one YAML document");
    }
    return documents.empty() ? YAML::Node() : documents[0];
}

struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

ConfigError::ConfigError(std::string file, int line, std::string key, std::string problem)
    : std::runtime_error(compose_message(file, line, key, problem)),
      file_(std::move(file)),
      line_(line),
      key_(std::move(key)),
      problem_(std::move(problem)) {}

std::optional<Rate> parse_rate(std::string_view text) {
    auto slash = text.find('/');
    if (slash == std::string_view::npos || slash == 0) return std::nullopt;
    auto count_text = text.substr(0, slash);
    if (!std::all_of(count_text.begin(), count_text.end(),
                     [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    bool out_of_range = false;
    auto count = parse_int(count_text, out_of_range);
    std::string per(text.substr(slash + 1));
    if (!per.empty() && !(per[0] >= '0' && per[0] <= '9')) per.insert(0, "1");  // "10/s"
    auto duration = parse_duration(per);
    if (!count || !duration) return std::nullopt;
    return Rate{*count, *duration};
}

const QueueConfig* Config::find_queue(std::string_view name) const {
    auto it = std::find_if(queues.begin(), queues.end(),
                           [&](const QueueConfig& queue) { return queue.name == name; });
    return it == queues.end() ? nullptr : &*it;
}

Config parse_config(const std::string& text, const std::string& file) {
    const Reader r(file);
    const Item root{load_yaml(text, file), ""};
    if (!root.node.IsMap()) {
        r.fail(root, "must be a YAML map with the keys mysql, redis, log_level and queues, got " +
                         describe(root.node));
    }
    Map map(r, root, {"mysql", "redis", "log_level", "queues"});
    Config config;
    config.file = file;
    config.mysql = read_mysql(r, map.require("mysql"));
    if (auto v = map.get("redis")) config.redis = read_redis(r, *v);
    if (auto v = map.get("log_level")) config.log_level = read_log_level(r, *v);
    config.queues = read_queues(r, map.require("queues"));
    return config;
}

Config load_config(const std::string& path) {
    std::unique_ptr<std::FILE, FileCloser> in(std::fopen(path.c_str(), "rb"));
    std::string text;
    if (in) {
        char buffer[8192];
        std::size_t n;
        while ((n = std::fread(buffer, 1, sizeof buffer, in.get())) > 0) text.append(buffer, n);
    }
    if (!in || std::ferror(in.get())) {
        const int error = errno;
        throw ConfigError(path, 0, "", "cannot read '" + path + "': " + std::strerror(error));
    }
    return parse_config(text, path);
}

}  // namespace rowpump
