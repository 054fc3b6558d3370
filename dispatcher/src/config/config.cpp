#include "rowpump/dispatcher/config/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "config/config_columns.hpp"
#include "config/config_sections.hpp"
#include "config/config_shared_tables.hpp"
#include "config/yaml_reader.hpp"
#include "rowpump/common/protocol/protocol.hpp"

namespace rowpump {

namespace {

using yaml::Item;
using yaml::Map;
using yaml::Reader;

SqlFragment read_fragment(const Reader& r, const Item& item) {
    std::string error;
    auto fragment = parse_fragment(r.string(item), error);
    if (!fragment) r.fail(item, error);
    return std::move(*fragment);
}

// A fragment into which no worker values are bound.
SqlFragment read_fragment_without_placeholders(const Reader& r, const Item& item) {
    auto result = read_fragment(r, item);
    if (!result.placeholders.empty()) {
        r.fail(item, "must not contain placeholders, found ':" + result.placeholders[0] + "'");
    }
    return result;
}

Rate read_rate(const Reader& r, const Item& item) {
    auto text = r.scalar(item, "a rate like 1/3s");
    auto rate = parse_rate(text);
    if (!rate) r.fail(item, "must be a rate like 1/3s, 500/1s or 10/s, got '" + text + "'");
    if (rate->count < 1)
        r.fail(item, "must allow at least 1 dispatch per period, got '" + text + "'");
    if (rate->per.count() <= 0) r.fail(item, "must have a positive period, got '" + text + "'");
    if (rate->per > kMaxDuration) {
        r.fail(item, "must have a period of at most " + format_duration(kMaxDuration) +
                         " (365 days), got '" + text + "'");
    }
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
    Map map(r, item, {"base", "cap", "max_attempts", "max_delay"});
    RetryConfig retry;
    if (auto v = map.get("base")) retry.base = r.positive_duration(*v);
    if (auto v = map.get("cap")) retry.cap = r.positive_duration(*v);
    check_not_below(r, map, "base", retry.base, "cap", retry.cap);
    if (auto v = map.get("max_attempts")) {
        retry.max_attempts = static_cast<int>(r.integer(*v, 1, std::numeric_limits<int>::max()));
    }
    auto max_delay = map.get("max_delay");
    retry.max_delay = max_delay ? r.positive_duration(*max_delay) : retry.cap;
    return retry;
}

void read_poll(const Reader& r, const Item& item, QueueConfig& queue) {
    Map map(r, item, {"min", "max"});
    if (auto v = map.get("min")) queue.poll_min = r.positive_duration(*v);
    if (auto v = map.get("max")) queue.poll_max = r.positive_duration(*v);
    check_not_below(r, map, "min", queue.poll_min, "max", queue.poll_max);
}

const std::vector<std::string_view> kQueueKeys = {
    "table", "id", "due", "order_by", "batch", "lease", "max_lease", "max_backlog", "rate",
    "on_success", "on_dead", "retry", "poll", "reap_interval", "leader_timeout", "columns",
    "due_since", "shards", "claim", "payload", "payload_max",
    // group_by and its per-key limits (docs/fairness.md)
    "group_by", "concurrency_per_key", "rate_per_key"};

// table, id, due, order_by, on_success, on_dead, payload: what goes into SQL text.
void read_queue_sql(const Reader& r, const Map& map, QueueConfig& queue) {
    queue.table = read_identifier(r, map.require("table"));
    queue.id = read_identifier(r, map.require("id"));
    queue.due = read_fragment_without_placeholders(r, map.require("due"));
    if (auto v = map.get("order_by")) {
        std::string error;
        auto terms = parse_order_by(r.string(*v), error);
        if (!terms) r.fail(*v, error);
        queue.order_by = std::move(*terms);
    }
    if (auto v = map.get("on_success")) {
        queue.on_success = read_fragment(r, *v);
        for (const auto& name : queue.on_success->placeholders) {
            if (!protocol::is_valid_value_name(name)) {
                r.fail(*v, "placeholder ':" + name + "' is longer than 64 characters");
            }
            if (name == protocol::kHandlerMsField) {
                r.fail(*v, "placeholder ':" + name +
                               "' is reserved: done messages carry the handler's duration in "
                               "ms=");
            }
        }
    }
    if (auto v = map.get("on_dead")) queue.on_dead = read_fragment_without_placeholders(r, *v);
    if (auto v = map.get("due_since")) queue.due_since = read_fragment_without_placeholders(r, *v);
    if (auto v = map.get("payload")) queue.payload = read_payload(r, *v);
    if (auto v = map.get("payload_max")) queue.payload_max = read_payload_max(r, *v);
    if (auto v = map.get("group_by")) queue.group_by = read_identifier(r, *v);
}

// batch, lease, max_lease, max_backlog, rate, retry, poll, reap_interval, leader_timeout: how fast
// and how much.
void read_queue_pacing(const Reader& r, const Map& map, QueueConfig& queue) {
    if (auto v = map.get("batch")) queue.batch = static_cast<int>(r.integer(*v, 1, 100000));
    if (auto v = map.get("lease")) queue.lease = r.positive_duration(*v);
    if (auto v = map.get("max_lease")) queue.max_lease = r.positive_duration(*v);
    if (auto v = map.get("max_backlog")) {
        queue.max_backlog = r.integer(*v, 1, std::numeric_limits<std::int64_t>::max());
    }
    if (auto v = map.get("rate")) queue.rate = read_rate(r, *v);
    if (auto v = map.get("retry")) queue.retry = read_retry(r, *v);
    if (auto v = map.get("poll")) read_poll(r, *v, queue);
    if (auto v = map.get("reap_interval")) queue.reap_interval = r.positive_duration(*v);
    if (auto v = map.get("leader_timeout")) {
        // The leader renews every third of it: below 300 ms that is a Redis call per 100 ms.
        queue.leader_timeout = r.positive_duration(*v);
        if (queue.leader_timeout < Millis(300) || queue.leader_timeout > Millis(3600000)) {
            r.fail(*v,
                   "must be between 300ms and 1h, got " + format_duration(queue.leader_timeout));
        }
    }
}

void read_claim_mode(const Reader& r, const Map& map, const Item& item, QueueConfig& queue) {
    const std::string mode = r.string(item);
    queue.claim = ClaimMode::mysql;
    if (mode == "mysql") return;
    if (mode != "redis") r.fail(item, "must be mysql or redis, got '" + mode + "'");
    queue.claim = ClaimMode::redis;
    // A claim held in Redis is found again by a keyset scan over (order_by column, id).
    if (queue.order_by.size() > 1) {
        r.fail(*map.get("order_by"), "with claim: redis, order_by takes one column, got " +
                                         std::to_string(queue.order_by.size()));
    }
    if (map.get("shards")) r.fail(item, "claim: redis does not work with shards yet; use mysql");
}

// group_by and its per-key limits (docs/fairness.md).
void read_group_limits(const Reader& r, const Map& map, QueueConfig& queue) {
    if (auto v = map.get("concurrency_per_key")) {
        if (queue.group_by.empty()) r.fail(*v, "needs group_by: the column that names a row's key");
        queue.concurrency_per_key = r.integer(*v, 1, std::numeric_limits<std::int64_t>::max());
        if (!queue.shards.empty()) {
            r.fail(*v, "does not work with shards yet: each shard's leader would count alone");
        }
    }
    if (auto v = map.get("rate_per_key")) {
        if (queue.group_by.empty()) r.fail(*v, "needs group_by: the column that names a row's key");
        queue.rate_per_key = read_rate(r, *v);
    }
    auto v = map.get("group_by");
    if (!v) return;
    if (queue.claim == ClaimMode::redis) {
        r.fail(*v, "does not work with claim: redis yet; use claim: mysql");
    }
    for (const auto& term : queue.order_by) {
        if (term.column == queue.group_by) r.fail(*v, "must not be an order_by column");
    }
}

// Without a `claim:` key: redis, which writes each row once, except where it does not work
// yet (an order_by of several columns, shards, group_by): there mysql. (QueueConfig::claim's own
// default stays mysql for queues built in code; key_lines says whether the config had the key.)
void default_claim_mode(const Map& map, QueueConfig& queue) {
    const bool redis_works =
        queue.order_by.size() <= 1 && !map.get("shards") && queue.group_by.empty();
    queue.claim = redis_works ? ClaimMode::redis : ClaimMode::mysql;
}

void record_key_lines(const Map& map, QueueConfig& queue) {
    queue.key_lines[""] = yaml::line_of(map.self());
    for (const auto& entry : map.entries())
        queue.key_lines[entry.name] = yaml::line_of(entry.value);
    auto columns = map.get("columns");
    if (!columns) return;
    for (const auto& kv : columns->node) {
        queue.key_lines["columns." + kv.first.Scalar()] = yaml::line_of(kv.second);
    }
}

QueueConfig read_queue(const Reader& r, const Map::Entry& entry, const MysqlConfig& mysql) {
    if (!protocol::is_valid_name(entry.name)) {
        r.fail(entry.key, "invalid queue name '" + entry.name +
                              "' (1 to 64 characters from A-Z a-z 0-9 _ . -)");
    }
    Map map(r, entry.value, kQueueKeys);
    QueueConfig queue;
    queue.name = entry.name;
    read_queue_sql(r, map, queue);
    read_queue_pacing(r, map, queue);
    read_columns(r, map, queue);
    if (auto v = map.get("shards")) queue.shards = read_shards(r, *v, mysql, queue.table);
    if (auto v = map.get("claim")) {
        read_claim_mode(r, map, *v, queue);
    } else {
        default_claim_mode(map, queue);
    }
    read_group_limits(r, map, queue);
    record_key_lines(map, queue);
    return queue;
}

std::vector<QueueConfig> read_queues(const Reader& r, const Item& item, const MysqlConfig& mysql) {
    Map map(r, item, {}, "a map of queue names to queue settings");
    if (map.entries().empty()) r.fail(item, "must define at least one queue");
    std::vector<QueueConfig> queues;
    for (const auto& entry : map.entries()) queues.push_back(read_queue(r, entry, mysql));
    return queues;
}

std::string read_log_level(const Reader& r, const Item& item) {
    auto level = r.string(item);
    for (const char* known : {"trace", "debug", "info", "warn", "error", "off"}) {
        if (level == known) return level;
    }
    r.fail(item, "must be one of trace, debug, info, warn, error, off; got '" + level + "'");
}

struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

MysqlConfig read_mysql(const Reader& r, const Item& item, const MysqlConfig* base) {
    Map map(r, item, {"host", "port", "user", "password", "database", "connect_timeout", "tls"});
    MysqlConfig mysql = base ? *base : MysqlConfig{};
    if (auto v = map.get("host")) mysql.host = r.nonempty_string(*v);
    if (auto v = map.get("port")) mysql.port = r.port(*v);
    if (auto v = base ? map.get("user") : map.require("user")) mysql.user = r.nonempty_string(*v);
    if (auto v = map.get("password")) mysql.password = r.string(*v);
    if (auto v = base ? map.get("database") : map.require("database")) {
        mysql.database = r.nonempty_string(*v);
    }
    if (auto v = map.get("connect_timeout")) mysql.connect_timeout = r.positive_duration(*v);
    if (auto v = map.get("tls")) mysql.tls = read_mysql_tls(r, *v);
    return mysql;
}

std::optional<Rate> parse_rate(std::string_view text) {
    auto slash = text.find('/');
    if (slash == std::string_view::npos || slash == 0) return std::nullopt;
    auto count_text = text.substr(0, slash);
    if (!std::all_of(count_text.begin(), count_text.end(),
                     [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    bool out_of_range = false;
    auto count = yaml::parse_int(count_text, out_of_range);
    std::string per(text.substr(slash + 1));
    if (!per.empty() && !(per[0] >= '0' && per[0] <= '9')) per.insert(0, "1");  // "10/s"
    auto duration = parse_duration(per);
    if (!count || !duration) return std::nullopt;
    return Rate{*count, *duration};
}

std::string Config::where(const QueueConfig& queue, const std::string& key) const {
    auto line = queue.key_lines.find(key);
    if (line == queue.key_lines.end()) line = queue.key_lines.find("");
    const int number = line == queue.key_lines.end() ? 0 : line->second;
    return file + ":" + std::to_string(number) + ": queues." + queue.name + "." + key;
}

const QueueConfig* Config::find_queue(std::string_view name) const {
    auto it = std::find_if(queues.begin(), queues.end(),
                           [&](const QueueConfig& queue) { return queue.name == name; });
    return it == queues.end() ? nullptr : &*it;
}

Config parse_config(const std::string& text, const std::string& file) {
    const Reader r(file);
    const Item root{yaml::load(text, file), ""};
    if (!root.node.IsMap()) {
        r.fail(root, "must be a YAML map with the keys mysql, redis, log_level and queues, got " +
                         yaml::describe(root.node));
    }
    Map map(
        r, root,
        {"mysql", "redis", "log_level", "outage_summary_interval", "queues", "http", "due_count"});
    Config config;
    config.file = file;
    config.mysql = read_mysql(r, map.require("mysql"));
    if (auto v = map.get("redis")) config.redis = read_redis(r, *v);
    if (auto v = map.get("log_level")) config.log_level = read_log_level(r, *v);
    if (auto v = map.get("outage_summary_interval")) {
        config.outage_summary_interval = r.positive_duration(*v);
        if (config.outage_summary_interval < Millis(1000)) {
            r.fail(*v,
                   "must be at least 1s, got " + format_duration(config.outage_summary_interval));
        }
    }
    config.queues = read_queues(r, map.require("queues"), config.mysql);
    if (auto v = map.get("http")) config.http = read_http(r, *v);
    if (auto v = map.get("due_count")) config.due_count = read_due_count(r, *v);
    check_shared_tables(config);
    return config;
}

std::string QueueConfig::label() const {
    return shard ? name + " shard " + shards.at(*shard).name : name;
}

std::vector<QueueSource> queue_sources(const Config& config, const QueueConfig& queue) {
    if (queue.shards.empty()) return {{config, queue}};
    std::vector<QueueSource> sources;
    for (std::size_t i = 0; i < queue.shards.size(); ++i) {
        QueueSource source{config, queue};
        source.config.mysql = queue.shards[i].mysql;
        source.queue.table = queue.shards[i].table;
        source.queue.shard = i;
        sources.push_back(std::move(source));
    }
    return sources;
}

bool same_server(const MysqlConfig& a, const MysqlConfig& b) {
    return a.host == b.host && a.port == b.port && a.user == b.user && a.password == b.password &&
           a.database == b.database && a.tls.mode == b.tls.mode && a.tls.ca == b.tls.ca &&
           a.tls.cert == b.tls.cert && a.tls.key == b.tls.key;
}

std::vector<Config> configs_by_server(const Config& config) {
    std::vector<Config> parts;
    for (const auto& queue : config.queues) {
        for (auto& source : queue_sources(config, queue)) {
            auto part = std::find_if(parts.begin(), parts.end(), [&](const Config& c) {
                return same_server(c.mysql, source.config.mysql);
            });
            if (part == parts.end()) {
                parts.push_back(std::move(source.config));
                parts.back().queues.clear();
                part = parts.end() - 1;
            }
            part->queues.push_back(std::move(source.queue));
        }
    }
    return parts;
}

std::set<std::string> config_keys_accepted(const std::string& text) {
    yaml::AcceptedKeys accepted;
    try {
        parse_config(text, "config");
    } catch (const ConfigError&) {
    }
    return accepted.keys();
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
