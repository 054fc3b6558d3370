#include "config/yaml_reader.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <sstream>

#include "config/credentials.hpp"
#include "rowpump/dispatcher/config/config_error.hpp"

namespace rowpump::yaml {

namespace {

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
        const auto value = lookup_variable(name);
        if (!value) {
            error = "environment variable " + name + " is not set";
            return std::nullopt;
        }
        out += *value;
        i = close;
    }
    return out;
}

// yaml-cpp 0.7 never returns from some malformed input (a ',' where a top-level node starts,
// as in ", a"): it emits a null node per turn and allocates until memory runs out. A first
// pass that only counts the parser's events stops it; no config comes near the limit.
class EventLimit : public YAML::EventHandler {
public:
    void OnDocumentStart(const YAML::Mark& mark) override { count(mark); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { count(mark); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { count(mark); }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  const std::string&) override {
        count(mark);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
        count(mark);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {
        count(mark);
    }
    void OnMapEnd() override {}

private:
    static constexpr int kMaxEvents = 100000;
    void count(const YAML::Mark& mark) {
        if (++events_ > kMaxEvents) {
            throw YAML::ParserException(mark, "cannot be parsed past this point");
        }
    }
    int events_ = 0;
};

void check_parser_ends(const std::string& text) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    EventLimit limit;
    while (parser.HandleNextDocument(limit)) {
    }
}

}  // namespace

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

YAML::Node load(const std::string& text, const std::string& file) {
    std::vector<YAML::Node> documents;
    try {
        check_parser_ends(text);
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

int line_of(const Item& item) {
    return item.line != 0 ? item.line : line_of(item.node);
}

void Reader::fail(const Item& item, const std::string& problem) const {
    throw ConfigError(file_, line_of(item), item.key, problem);
}

std::string Reader::scalar(const Item& item, const std::string& expected) const {
    if (!item.node.IsScalar()) fail(item, "must be " + expected + ", got " + describe(item.node));
    std::string error;
    auto text = expand_env(item.node.Scalar(), error);
    if (!text) fail(item, error);
    return std::move(*text);
}

std::string Reader::nonempty_string(const Item& item) const {
    auto text = string(item);
    if (text.empty()) fail(item, "must not be empty");
    return text;
}

std::int64_t Reader::integer(const Item& item, std::int64_t min, std::int64_t max) const {
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

Millis Reader::positive_duration(const Item& item) const {
    auto text = scalar(item, "a duration");
    auto value = parse_duration(text);
    if (!value) fail(item, "must be a duration like 250ms, 10s or 5m, got '" + text + "'");
    if (value->count() <= 0) fail(item, "must be positive, got '" + text + "'");
    if (*value > kMaxDuration) {
        fail(item, "must be at most " + format_duration(kMaxDuration) + " (365 days), got '" +
                       text + "'");
    }
    return *value;
}

namespace {
thread_local AcceptedKeys* accepted_keys = nullptr;
}  // namespace

AcceptedKeys::AcceptedKeys() : outer_(accepted_keys) {
    accepted_keys = this;
}

AcceptedKeys::~AcceptedKeys() {
    accepted_keys = outer_;
}

void AcceptedKeys::add(const std::string& key) {
    if (accepted_keys != nullptr) accepted_keys->keys_.insert(key);
}

Map::Map(const Reader& reader, Item self, std::vector<std::string_view> known,
         const std::string& expected)
    : reader_(reader), self_(std::move(self)) {
    for (auto name : known) AcceptedKeys::add(child_key(name));
    if (!self_.node.IsMap()) {
        reader_.fail(self_, "must be " + expected + ", got " + describe(self_.node));
    }
    for (const auto& kv : self_.node) add(kv.first, kv.second, known);
}

std::optional<Item> Map::get(std::string_view name) const {
    for (const auto& entry : entries_) {
        if (entry.name == name) return entry.value;
    }
    return std::nullopt;
}

Item Map::require(std::string_view name) const {
    auto item = get(name);
    if (!item) reader_.fail({self_.node, child_key(name), self_.line}, "is required");
    return *item;
}

std::string Map::child_key(std::string_view name) const {
    return self_.key.empty() ? std::string(name) : self_.key + "." + std::string(name);
}

void Map::add(const YAML::Node& key, const YAML::Node& value,
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

}  // namespace rowpump::yaml
