#pragma once

// The configuration schema. docs/configuration.md documents every key
// (tests/unit/test_docs_drift.cpp checks); config/ holds commented examples. Loading validates
// everything up front: a config that loads is safe to build SQL from.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "rowpump/common/duration.hpp"
#include "rowpump/dispatcher/config/config_error.hpp"
#include "rowpump/dispatcher/sql/sql.hpp"
#include "rowpump/redis_address.hpp"

namespace rowpump {

// TLS on the MySQL connection (`mysql.tls`), as the client library (libmariadb 3.3, through
// mysql-connector-c++ 1.1) can do it:
//   disabled:        plain text.
//   preferred:       TLS when the server offers it, otherwise plain text; nothing is checked.
//   required:        TLS or no connection; the server's certificate is not checked.
//   verify_ca:       as required, and the server's certificate must be signed by `ca`.
//   verify_identity: as verify_ca, and the certificate must name the host rowpump connects to.
enum class TlsMode { disabled, preferred, required, verify_ca, verify_identity };

struct MysqlTls {
    TlsMode mode = TlsMode::preferred;
    std::string ca;    // PEM file of the CA that signed the server's certificate (verify_*)
    std::string cert;  // PEM client certificate, for accounts created REQUIRE X509; with `key`
    std::string key;   // PEM private key of `cert`
};
// "disabled", "preferred", ... as the config spells them.
const char* tls_mode_name(TlsMode mode);

struct MysqlConfig {
    std::string host = "127.0.0.1";
    int port = 3306;
    std::string user;  // required
    std::string password;
    std::string database;  // required
    Millis connect_timeout{2000};
    MysqlTls tls;
};

// "N/duration": at most `count` rows dispatched in any window of `per`. "1/3s" means no two
// dispatches less than 3 s apart.
struct Rate {
    std::int64_t count = 0;
    Millis per{0};
};
std::optional<Rate> parse_rate(std::string_view text);  // "1/3s", "500/1s", "10/s"

// Names of the bookkeeping columns rowpump adds to the user's table (see `rowpump migrate`).
struct ColumnNames {
    std::string token = "rp_token";
    std::string lease = "rp_lease_until";
    std::string attempts = "rp_attempts";
    std::string error = "rp_last_error";
    std::string dead = "rp_dead_at";
    std::string lease_index = "rp_lease_idx";
};

struct RetryConfig {
    Millis base{1000};  // first backoff; doubles with every failed attempt
    Millis cap{300000};
    int max_attempts = 10;  // the row is dead after this many failed attempts
    // The longest delay a worker may ask for with retry delay=...; longer ones are cut to
    // this. Defaults to cap.
    Millis max_delay{300000};
};

// One MySQL source of a queue with shards: a server, database and table with the queue's
// columns. Keys it does not set are those of the top-level `mysql`; its position in the list
// goes into claim tokens (messages.hpp, token_shard), so new shards go at the end.
struct ShardConfig {
    std::string name;   // names its leader lock and done list in Redis, and its log lines
    MysqlConfig mysql;  // complete: the top-level mysql with the shard's own keys over it
    std::string table;  // the queue's table unless the shard names another
};

// Where a claim is held while its task is in Redis (docs/semantics.md, "Claims in MySQL or in
// Redis").
//   mysql: the claim writes a token and a lease end into the row; the outcome writes it again.
//   redis: the row is written once, by the outcome. The leader keeps the ids in flight in
//          memory (learned from Redis when it takes over) and the outcome is fenced by the
//          row: it applies only while the row is claimable and does not hold its token yet.
enum class ClaimMode { mysql, redis };

// The smallest payload_max: room for an id and a token.
constexpr std::int64_t kMinPayloadMax = 256;

struct QueueConfig {
    std::string name;  // key under `queues:`; also names the Redis keys
    std::string table;
    std::string id;
    SqlFragment due;                  // required
    std::vector<OrderTerm> order_by;  // optional
    ClaimMode claim = ClaimMode::mysql;
    int batch = 1000;
    Millis lease{60000};
    Millis max_lease{24 * 60 * 60 * 1000};  // longest lease an extend may ask for: cut to it
    std::int64_t max_backlog = 10000;
    std::optional<Rate> rate;
    // A fair share across keys (docs/fairness.md): the column whose value names a row's key
    // (a tenant, a downstream host). Claims take rows from the keys with due rows in turn
    // instead of strictly in order_by order. Empty: no grouping.
    std::string group_by;
    // With group_by: at most this many tasks of one key in flight (claimed and not yet
    // applied: ready, held, or reported). 0: no limit.
    std::int64_t concurrency_per_key = 0;
    // With group_by: no key's rows pushed faster than this, on the Redis clock (Keys::key_rate,
    // common/lua/push.lua). Overrides per key: Keys::key_limits (loop/key_limits.hpp).
    std::optional<Rate> rate_per_key;
    std::optional<SqlFragment> on_success;  // may use :name placeholders
    std::optional<SqlFragment> on_dead;     // no placeholders
    RetryConfig retry;
    Millis poll_min{50};         // first idle sleep
    Millis poll_max{1000};       // idle sleeps double up to this
    Millis reap_interval{1000};  // how often heartbeats of workers are checked
    // A leader that has not renewed the leader lock for this long is replaced (leadership.hpp).
    Millis leader_timeout{3000};
    ColumnNames columns;
    // When a row became due, as an SQL expression ("updated_time + INTERVAL 10 SECOND"):
    // gives the oldest due row's age (the queue's latency). Optional.
    std::optional<SqlFragment> due_since;
    // Columns whose values travel in the ready message after the token, read by the claim's
    // own read (docs/configuration.md, "Payload"), and the longest ready message: a row whose
    // message would be longer is reported failed, with a reason naming its size.
    std::vector<std::string> payload;
    std::int64_t payload_max = 4096;
    // Sources of the queue's rows; empty: the queue's table on the top-level `mysql`.
    std::vector<ShardConfig> shards;
    // In the per-shard copies that queue_sources() makes: which shard the copy stands for.
    std::optional<std::size_t> shard;

    // "users", or "users shard eu" in a shard's copy: how log lines and commands name it.
    std::string label() const;
    // The line each key of this queue was given on, by its name under the queue ("due",
    // "on_success", "columns.token"), for problems found after loading (by `rowpump check`).
    std::map<std::string, int> key_lines;
};

// The dispatcher's HTTP endpoint (metrics, health, dashboard); off when absent.
struct HttpConfig {
    std::string host = "127.0.0.1";  // loopback unless the config says otherwise
    int port = 9464;
    std::string token;     // what POST actions must present; empty: none set
    bool actions = false;  // dashboard actions (retry, discard, pause); needs a token
    // GET /api/state and /metrics need the token too; on by default beyond loopback.
    bool read_token = false;
    // Names a request's Host may carry besides IP addresses, localhost and the listen host
    // (DNS rebinding: a page on another name cannot read or act); "*": any.
    std::vector<std::string> hosts;
};

// 127.0.0.0/8, ::1 or localhost: only this machine's processes can connect there.
bool loopback_host(const std::string& host);

// How the due backlog is counted (shared by status, metrics and the dashboard): at most
// every `interval`, never past `cap` rows, and given up after `timeout`.
struct DueCountConfig {
    Millis interval{5000};
    std::int64_t cap = 100000;
    Millis timeout{2000};
};

struct Config {
    std::string file;  // where it was loaded from, for messages
    MysqlConfig mysql;
    RedisAddress redis;
    std::string log_level = "info";
    // While a queue keeps failing (a server away), one summary line per this interval.
    Millis outage_summary_interval{30000};
    std::vector<QueueConfig> queues;  // in file order, at least one
    std::optional<HttpConfig> http;
    DueCountConfig due_count;

    const QueueConfig* find_queue(std::string_view name) const;
    // "FILE:LINE: queues.Q.KEY", as a ConfigError names a place; LINE is the queue's own line
    // when the key was not given.
    std::string where(const QueueConfig& queue, const std::string& key) const;
};

// Where one queue's rows live, as a config of its own: with shards, one per shard, each with
// the shard's mysql and table (and `queue.shard` set); without, the queue as configured.
// Everything that talks to a queue's table goes through these.
struct QueueSource {
    Config config;      // `mysql` is the source's server
    QueueConfig queue;  // `table` is the source's table
};
std::vector<QueueSource> queue_sources(const Config& config, const QueueConfig& queue);
// Whether two MySQL settings reach the same server and database as the same user, over the
// same TLS settings.
bool same_server(const MysqlConfig& a, const MysqlConfig& b);
// The config split by MySQL server, for commands that work through one connection at a time
// (check, migrate, the statement and login checks of run): each part's `mysql` is one server
// and its `queues` the sources on it (queue_sources). Without shards, the config itself.
std::vector<Config> configs_by_server(const Config& config);

// Reads and validates a config file. ${VAR} in scalar values is replaced by the environment
// variable VAR (an unset variable is an error; $$ is a literal $). Throws ConfigError.
Config load_config(const std::string& path);
// Same, from text; `file` is only used in messages.
Config parse_config(const std::string& text, const std::string& file);

}  // namespace rowpump

namespace rowpump {

// Every dotted key the parser accepts in the maps it reads while parsing `text` ("mysql.host",
// "queues.users.retry.base", "queues.orders.shards[0].mysql.port"), given in the text or not;
// parsing stops at the first error, so a text that parses visits every map it holds. For the
// test that keeps docs/configuration.md in step with the parser.
std::set<std::string> config_keys_accepted(const std::string& text);

}  // namespace rowpump
