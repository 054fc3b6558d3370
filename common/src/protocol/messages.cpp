#include "rowpump/common/protocol/messages.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>

namespace rowpump::protocol {

namespace {

bool is_unreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

bool is_upper_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (;;) {
        auto pos = text.find(sep, start);
        parts.push_back(text.substr(start, pos - start));
        if (pos == std::string_view::npos) return parts;
        start = pos + 1;
    }
}

std::optional<Verb> parse_verb(std::string_view text) {
    for (Verb v : {Verb::success, Verb::retry, Verb::fail, Verb::extend}) {
        if (verb_name(v) == text) return v;
    }
    return std::nullopt;
}

// Whole milliseconds, at most a year: enough for any handler, and no overflow in a sum.
std::optional<Millis> parse_handler_ms(std::string_view text) {
    constexpr std::int64_t kMax = 366LL * 24 * 3600 * 1000;
    if (text.empty() || text.size() > 11) return std::nullopt;
    std::int64_t ms = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        ms = ms * 10 + (c - '0');
    }
    if (ms > kMax) return std::nullopt;
    return Millis(ms);
}

// Applies one "name=value" field to `done`; returns an error text or "".
std::string apply_field(Done& done, std::string_view name, std::string value) {
    auto duration = [&](std::optional<Millis>& out) -> std::string {
        out = parse_duration(value);
        return out ? "" : "invalid duration '" + value + "' for '" + std::string(name) + "'";
    };
    if (name == kHandlerMsField && done.verb != Verb::extend) {
        if (done.handler_ms) return "field 'ms' given twice";
        done.handler_ms = parse_handler_ms(value);
        return done.handler_ms ? "" : "invalid handler milliseconds '" + value + "' for 'ms'";
    }
    switch (done.verb) {
        case Verb::success: {
            if (!is_valid_value_name(name)) return "invalid value name '" + std::string(name) + "'";
            bool seen = std::any_of(done.values.begin(), done.values.end(),
                                    [&](const auto& kv) { return kv.first == name; });
            if (seen) return "value '" + std::string(name) + "' given twice";
            done.values.emplace_back(std::string(name), std::move(value));
            return "";
        }
        case Verb::retry:
            if (name == "delay") return duration(done.delay);
            [[fallthrough]];
        case Verb::fail:
            if (name == "reason") {
                done.reason = std::move(value);
                return "";
            }
            break;
        case Verb::extend:
            if (name == "lease") {
                std::optional<Millis> lease;
                auto error = duration(lease);
                if (error.empty() && lease->count() <= 0) error = "lease must be positive";
                if (error.empty()) done.lease = *lease;
                return error;
            }
            break;
    }
    return "unknown field '" + std::string(name) + "' for " + std::string(verb_name(done.verb));
}

}  // namespace

bool is_valid_value_name(std::string_view name) {
    if (name.empty() || name.size() > 64) return false;
    auto alpha = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    };
    if (!alpha(name[0])) return false;
    return std::all_of(name.begin(), name.end(),
                       [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); });
}

std::string percent_encode(std::string_view raw) {
    static const char* const kHex = "0123456789ABCDEF";
    std::string out;
    out.reserve(raw.size());
    for (unsigned char c : raw) {
        if (is_unreserved(c)) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

std::optional<std::string> percent_decode(std::string_view encoded) {
    std::string out;
    out.reserve(encoded.size());
    for (std::size_t i = 0; i < encoded.size(); ++i) {
        char c = encoded[i];
        if (c != '%') {
            if (c == ' ' || c == ':' || c == '=') return std::nullopt;
            out += c;
            continue;
        }
        if (i + 2 >= encoded.size()) return std::nullopt;
        int hi = hex_value(encoded[i + 1]), lo = hex_value(encoded[i + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

bool is_valid_token(std::string_view token) {
    if (token.size() < kBatchPrefixLength + 3 || token.size() > 200) return false;
    if (!std::all_of(token.begin(), token.begin() + 16, is_upper_hex) || token[16] != '-') {
        return false;
    }
    auto rest = token.substr(kBatchPrefixLength);
    auto dash = rest.find('-');
    if (dash == 0 || dash == std::string_view::npos || dash > 9) return false;
    auto attempt = rest.substr(0, dash), row = rest.substr(dash + 1);
    return std::all_of(attempt.begin(), attempt.end(),
                       [](char c) { return c >= '0' && c <= '9'; }) &&
           attempt[0] != '0' && !row.empty() && std::all_of(row.begin(), row.end(), is_upper_hex);
}

int token_attempt(std::string_view token) {
    auto rest = token.substr(kBatchPrefixLength);
    return std::atoi(std::string(rest.substr(0, rest.find('-'))).c_str());
}

std::string shard_batch_prefix(std::size_t shard) {
    static const char* const kHex = "0123456789ABCDEF";
    return {kHex[(shard >> 4) & 15], kHex[shard & 15]};
}

std::size_t token_shard(std::string_view token) {
    return static_cast<std::size_t>(hex_value(token[0]) * 16 + hex_value(token[1]));
}

std::string format_ready(std::string_view id, std::string_view token,
                         const std::vector<std::string>& names,
                         const std::vector<std::optional<std::string>>& values) {
    std::string out = percent_encode(id) + ":" + std::string(token);
    for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
        out += ' ';
        out += names[i];
        if (!values[i]) continue;  // SQL NULL: the bare name
        out += '=';
        out += percent_encode(*values[i]);
    }
    return out;
}

namespace {

// The fields after the token: "name=value" (value percent-encoded) or a bare "name" (NULL).
// Every name is kept, known or not; returns an error text or "".
std::string parse_ready_fields(std::string_view text,
                               std::map<std::string, std::optional<std::string>>& fields) {
    for (auto part : split(text, ' ')) {
        auto eq = part.find('=');
        auto name = part.substr(0, eq);
        if (!is_valid_value_name(name)) return "invalid field name '" + std::string(name) + "'";
        if (fields.count(std::string(name)) != 0) {
            return "field '" + std::string(name) + "' given twice";
        }
        std::optional<std::string> value;
        if (eq != std::string_view::npos) {
            value = percent_decode(part.substr(eq + 1));
            if (!value) return "invalid percent-encoding in field '" + std::string(name) + "'";
        }
        fields.emplace(std::string(name), std::move(value));
    }
    return "";
}

}  // namespace

std::optional<Task> parse_ready(std::string_view message, std::string& error) {
    if (message.size() > kMaxMessageBytes) {
        error = "message longer than " + std::to_string(kMaxMessageBytes) + " bytes";
        return std::nullopt;
    }
    const auto space = message.find(' ');
    const auto head = message.substr(0, space);
    auto colon = head.rfind(':');
    if (colon == std::string_view::npos) {
        error = "no ':' between id and token";
        return std::nullopt;
    }
    auto id = percent_decode(head.substr(0, colon));
    if (!id || id->empty()) {
        error = "invalid id '" + std::string(head.substr(0, colon)) + "'";
        return std::nullopt;
    }
    auto token = head.substr(colon + 1);
    if (!is_valid_token(token)) {
        error = "invalid token '" + std::string(token) + "'";
        return std::nullopt;
    }
    Task task;
    task.id = std::move(*id);
    task.token = std::string(token);
    task.attempt = token_attempt(token);
    task.message = std::string(message);
    if (space != std::string_view::npos) {
        error = parse_ready_fields(message.substr(space + 1), task.fields);
        if (!error.empty()) return std::nullopt;
    }
    return task;
}

std::string ready_message(const Task& task) {
    return task.message.empty() ? format_ready(task.id, task.token) : task.message;
}

std::string done_head(const Task& task) {
    if (task.message.empty()) return format_ready(task.id, task.token);
    return task.message.substr(0, task.message.find(' '));
}

std::string_view verb_name(Verb verb) {
    switch (verb) {
        case Verb::success:
            return "ok";
        case Verb::retry:
            return "retry";
        case Verb::fail:
            return "fail";
        case Verb::extend:
            return "extend";
    }
    return "?";
}

std::string format_done(const Done& done) {
    std::string out = done_head(done.task) + " " + std::string(verb_name(done.verb));
    auto field = [&](std::string_view name, std::string_view value) {
        out += ' ';
        out += name;
        out += '=';
        out += percent_encode(value);
    };
    for (const auto& [name, value] : done.values) field(name, value);
    if (!done.reason.empty()) field("reason", done.reason);
    if (done.delay) field("delay", format_duration(*done.delay));
    if (done.verb == Verb::extend) field("lease", format_duration(done.lease));
    if (done.handler_ms && done.verb != Verb::extend)
        field(kHandlerMsField, std::to_string(done.handler_ms->count()));
    return out;
}

std::optional<Done> parse_done(std::string_view message, std::string& error) {
    if (message.size() > kMaxMessageBytes) {
        error = "message longer than " + std::to_string(kMaxMessageBytes) + " bytes";
        return std::nullopt;
    }
    auto fields = split(message, ' ');
    if (fields.size() < 2) {
        error = "expected '<id>:<token> <verb> ...'";
        return std::nullopt;
    }
    Done done;
    auto task = parse_ready(fields[0], error);
    if (!task) return std::nullopt;
    done.task = std::move(*task);
    auto verb = parse_verb(fields[1]);
    if (!verb) {
        error =
            "unknown verb '" + std::string(fields[1]) + "' (expected ok, retry, fail or extend)";
        return std::nullopt;
    }
    done.verb = *verb;
    bool has_lease = false;
    for (std::size_t i = 2; i < fields.size(); ++i) {
        auto eq = fields[i].find('=');
        if (eq == std::string_view::npos) {
            error = "field '" + std::string(fields[i]) + "' is not name=value";
            return std::nullopt;
        }
        auto name = fields[i].substr(0, eq);
        auto value = percent_decode(fields[i].substr(eq + 1));
        if (!value) {
            error = "invalid percent-encoding in field '" + std::string(name) + "'";
            return std::nullopt;
        }
        has_lease = has_lease || name == "lease";
        error = apply_field(done, name, std::move(*value));
        if (!error.empty()) return std::nullopt;
    }
    if (done.verb == Verb::extend && !has_lease) {
        error = "extend needs lease=<duration>";
        return std::nullopt;
    }
    return done;
}

}  // namespace rowpump::protocol
