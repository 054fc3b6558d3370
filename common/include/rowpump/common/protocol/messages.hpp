#pragma once

// The messages of the wire protocol: ready messages (dispatcher -> worker) and done messages
// (worker -> dispatcher). docs/protocol.md documents the same thing for workers written
// in other languages; keep the two in step.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rowpump/common/duration.hpp"
#include "rowpump/task.hpp"
#include "rowpump/verb.hpp"

namespace rowpump::protocol {

// Names of values a worker reports with "ok": [A-Za-z_][A-Za-z0-9_]*, at most 64 characters.
bool is_valid_value_name(std::string_view name);

// Bytes outside [A-Za-z0-9-._~] become %XX (upper-case hex).
std::string percent_encode(std::string_view raw);
std::optional<std::string> percent_decode(std::string_view encoded);

// A claim token is "<batch>-<attempt>-<row>": 16 upper-case hex digits naming the claim
// batch, the 1-based attempt number, and 8 hex digits of a checksum of the row id (CRC32), so
// that a token is at most 36 characters whatever the id. The id itself travels beside the
// token, in the ready message. Workers treat it as opaque apart from the attempt number.
constexpr std::size_t kBatchPrefixLength = 17;  // 16 hex digits and the dash
bool is_valid_token(std::string_view token);
int token_attempt(std::string_view token);  // precondition: is_valid_token(token)
// A queue with shards starts every batch with the shard's position in its list, as two hex
// digits: the token keeps its shape (workers see no difference), and an outcome finds its way
// back to the server its row lives on.
constexpr std::size_t kMaxShards = 256;
std::string shard_batch_prefix(std::size_t shard);  // precondition: shard < kMaxShards
std::size_t token_shard(std::string_view token);    // precondition: is_valid_token(token)

// Ready message: "<id>:<token>[ <name>=<value>]...", the id and values percent-encoded, a
// field without "=" standing for NULL. format_ready writes one field per name, the value at
// the same position (a row's payload columns); parse_ready keeps the message in Task::message
// and the fields, whatever their names, in Task::fields; ready_message gives the message back,
// formatting it for a task built by hand. done_head is "<id>:<token>" without the fields: what
// a done message starts with, and what the dispatcher looks for in Redis (held.lua).
std::string format_ready(std::string_view id, std::string_view token,
                         const std::vector<std::string>& names = {},
                         const std::vector<std::optional<std::string>>& values = {});
std::optional<Task> parse_ready(std::string_view message, std::string& error);
std::string ready_message(const Task& task);
std::string done_head(const Task& task);

// Done message: "<id>:<token> <verb>[ <name>=<value>]..." with percent-encoded values (the
// ready message's fields are not sent back).
//   ok      [<name>=<value>]...   values for the queue's on_success clause
//   retry   [reason=<text>] [delay=<duration>]
//   fail    [reason=<text>]
//   extend  lease=<duration>      keep the claim for this long from now; task stays in hand
// ok, retry and fail may also carry ms=<milliseconds>: how long the handler ran, for the
// rowpump_handler_seconds histogram. It is not a value (kHandlerMsField is reserved) and an
// old worker that leaves it out is fine.
// Verb::success is spelled "ok".
std::string_view verb_name(Verb verb);

constexpr std::size_t kMaxMessageBytes = 64 * 1024;
constexpr std::string_view kHandlerMsField = "ms";

struct Done {
    Task task;  // what this reports on; from parse_done, task.message is "<id>:<token>"
    Verb verb = Verb::success;
    std::vector<std::pair<std::string, std::string>> values;  // ok only
    std::string reason;                                       // retry, fail
    std::optional<Millis> delay;                              // retry
    Millis lease{0};                                          // extend
    std::optional<Millis> handler_ms;  // ok, retry, fail: how long the handler ran (ms=)
};
std::string format_done(const Done& done);
std::optional<Done> parse_done(std::string_view message, std::string& error);

}  // namespace rowpump::protocol
