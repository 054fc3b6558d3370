#pragma once

// The wire protocol between the dispatcher and workers: Redis key names and message formats.
// README.md ("Protocol") documents the same thing for workers written in other languages;
// keep the two in step.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rowpump/common/duration.hpp"

namespace rowpump::protocol {

// Every key of a queue carries the queue name as a Redis Cluster hash tag:
// rowpump:{<queue>}:<suffix>.
struct Keys {
    std::string ready;    // list: ready messages waiting for a worker
    std::string done;     // list: done messages waiting for the dispatcher
    std::string bad;      // list: malformed messages moved aside
    std::string workers;  // set: ids of workers that may hold tasks
    std::string meta;     // hash: what the dispatcher announces about the queue
    std::string stats;    // hash: counters kept by the dispatcher

    std::string processing(std::string_view worker_id) const;  // list: a worker's tasks in hand
    std::string heartbeat(std::string_view worker_id) const;   // string with a TTL

    std::string prefix;  // "rowpump:{<queue>}:"
};
Keys keys_for(std::string_view queue);

// Queue names and worker ids go into key names: [A-Za-z0-9_.-], 1 to 64 characters.
bool is_valid_name(std::string_view name);
// Names of values a worker reports with "ok": [A-Za-z_][A-Za-z0-9_]*, at most 64 characters.
bool is_valid_value_name(std::string_view name);

// Bytes outside [A-Za-z0-9-._~] become %XX (upper-case hex).
std::string percent_encode(std::string_view raw);
std::optional<std::string> percent_decode(std::string_view encoded);

// A claim token is "<batch>-<attempt>-<row>": 16 upper-case hex digits naming the claim
// batch, the 1-based attempt number, and HEX() of the row id, so every claim of every row
// has a token of its own. Workers treat it as opaque apart from the attempt number.
constexpr std::size_t kBatchPrefixLength = 17;  // 16 hex digits and the dash
bool is_valid_token(std::string_view token);
int token_attempt(std::string_view token);  // precondition: is_valid_token(token)

// Ready message: "<id>:<token>", the id percent-encoded.
struct Task {
    std::string id;
    std::string token;
    int attempt = 1;
};
std::string format_ready(std::string_view id, std::string_view token);
std::optional<Task> parse_ready(std::string_view message, std::string& error);

// Done message: "<ready message> <verb>[ <name>=<value>]..." with percent-encoded values.
//   ok      [<name>=<value>]...   values for the queue's on_success clause
//   retry   [reason=<text>] [delay=<duration>]
//   fail    [reason=<text>]
//   extend  lease=<duration>      keep the claim for this long from now; task stays in hand
enum class Verb { ok, retry, fail, extend };
std::string_view verb_name(Verb verb);

constexpr std::size_t kMaxMessageBytes = 64 * 1024;

struct Done {
    std::string ready;  // the ready message this reports on, verbatim
    Task task;
    Verb verb = Verb::ok;
    std::vector<std::pair<std::string, std::string>> values;  // ok only
    std::string reason;                                       // retry, fail
    std::optional<Millis> delay;                              // retry
    Millis lease{0};                                          // extend
};
std::string format_done(const Done& done);
std::optional<Done> parse_done(std::string_view message, std::string& error);

// Lua run by workers to report outcomes: for each (ready message, done message) pair, removes
// the ready message from the worker's processing list and, only if it was still there, pushes
// the done message. Returns how many reports were accepted; a report is refused when the
// task had already been taken back from this worker.
//   KEYS[1] processing list, KEYS[2] done list; ARGV: ready message, done message, ...
extern const char* const kCompleteScript;

// Lua run by workers to take up to ARGV[1] tasks at once without blocking: LMOVE from the
// ready list to the processing list, oldest first. Returns the messages it moved.
//   KEYS[1] ready list, KEYS[2] processing list; ARGV[1] how many at most
extern const char* const kTakeScript;

// Lua run by the dispatcher to take back the tasks of a worker whose heartbeat expired.
// Atomic with respect to the worker's own reports. Returns the ready messages it took.
//   KEYS[1] heartbeat, KEYS[2] processing list, KEYS[3] workers set; ARGV[1] worker id
extern const char* const kReapScript;

}  // namespace rowpump::protocol
