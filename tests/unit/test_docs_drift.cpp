// The reference in docs/ against the code it describes, so that neither can change alone:
// every key the config parser accepts is in docs/configuration.md's table with the default the
// parser uses (and every key listed there is accepted), and every subcommand, option and flag
// of the command line is in docs/operations.md's "Commands". The metrics: tests/http/
// test_docs_metrics.cpp (it needs a running dispatcher).

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "rowpump/dispatcher/cli/command_line.hpp"
#include "rowpump/dispatcher/config/config.hpp"

namespace {

std::string read_source(const std::string& path) {
    std::ifstream in(std::string(ROWPUMP_SOURCE_DIR) + "/" + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The text of `markdown` from the line `heading` to the next heading of its level or higher.
std::string section(const std::string& markdown, const std::string& heading) {
    const auto start = markdown.find("\n" + heading + "\n");
    if (start == std::string::npos) return "";
    const auto level = heading.substr(0, heading.find(' ') + 1);  // "## "
    auto end = markdown.find("\n" + level, start + heading.size() + 1);
    while (end != std::string::npos && markdown.compare(end + 1, 3, "###") == 0 &&
           level.size() < 4) {
        end = markdown.find("\n" + level, end + 1);
    }
    return markdown.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

struct KeyRow {
    std::string key;       // "queues.<queue>.retry.base"
    std::string default_;  // the cell as written
};

// The rows of docs/configuration.md's table of keys.
std::vector<KeyRow> documented_keys() {
    const auto text =
        section(read_source("docs/configuration.md"), "## Every key: its default and its bounds");
    std::vector<KeyRow> rows;
    std::istringstream lines(text);
    const std::regex row(R"(^\| `([^`]+)` \| ([^|]*?) \|)");
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (std::regex_search(line, m, row)) rows.push_back({m[1], m[2]});
    }
    return rows;
}

// A YAML tree built from dotted keys; "shards[]" is a list of one map.
struct Tree {
    std::string value;  // raw YAML, for a leaf
    std::map<std::string, Tree> children;

    void set(const std::vector<std::string>& path, std::size_t at, const std::string& v) {
        if (at == path.size()) {
            value = v;
            return;
        }
        children[path[at]].set(path, at + 1, v);
    }
    void emit(std::ostringstream& out, int indent) const {
        for (const auto& [name, child] : children) {
            const std::string pad(indent, ' ');
            const bool list = name.size() > 2 && name.compare(name.size() - 2, 2, "[]") == 0;
            out << pad << (list ? name.substr(0, name.size() - 2) : name) << ":";
            if (child.children.empty()) {
                out << " " << (child.value.empty() ? "{}" : child.value) << "\n";
            } else if (list) {
                out << "\n" << pad << "  -\n";
                child.emit(out, indent + 4);
            } else {
                out << "\n";
                child.emit(out, indent + 2);
            }
        }
    }
};

std::vector<std::string> path_of(const std::string& key) {
    std::vector<std::string> path;
    std::istringstream parts(key);
    for (std::string part; std::getline(parts, part, '.');)
        path.push_back(part == "<queue>" ? "q" : part);
    return path;
}

// The smallest config the parser takes, with `key` set to `value` (or, with an empty value,
// the maps on the way to it created empty). A shard always has a name.
std::string config_with(const std::string& key, const std::string& value) {
    Tree root;
    root.set({"mysql", "user"}, 0, "rowpump");
    root.set({"mysql", "database"}, 0, "app");
    root.set({"queues", "q", "table"}, 0, "jobs");
    root.set({"queues", "q", "id"}, 0, "id");
    root.set({"queues", "q", "due"}, 0, "\"state = 0\"");
    auto path = path_of(key);
    if (path.size() > 3 && path[2] == "shards[]")
        root.set(path_of("queues.q.shards[].name"), 0, "s1");
    if (value.empty()) path.pop_back();
    if (!path.empty()) root.set(path, 0, value);
    std::ostringstream out;
    root.emit(out, 0);
    return out.str();
}

std::string dump(const rowpump::MysqlConfig& m) {
    std::ostringstream o;
    o << m.host << "|" << m.port << "|" << m.user << "|" << m.password << "|" << m.database << "|"
      << m.connect_timeout.count() << "|" << static_cast<int>(m.tls.mode) << "|" << m.tls.ca << "|"
      << m.tls.cert << "|" << m.tls.key;
    return o.str();
}

// Every value a parsed config holds, as text: two configs that dump alike behave alike.
std::string dump(const rowpump::Config& c) {
    std::ostringstream o;
    o << "mysql " << dump(c.mysql) << "\nredis " << c.redis.host << "|" << c.redis.port << "|"
      << c.redis.sentinels.size() << "|" << c.redis.master << "|" << c.redis.cluster.size() << "|"
      << c.redis.user << "|" << c.redis.password << "|" << c.redis.connect_timeout.count()
      << "\nlog " << c.log_level << "|" << c.outage_summary_interval.count() << "\ndue_count "
      << c.due_count.interval.count() << "|" << c.due_count.cap << "|"
      << c.due_count.timeout.count() << "\n";
    if (c.http) {
        o << "http " << c.http->host << "|" << c.http->port << "|" << c.http->token << "|"
          << c.http->actions << "|" << c.http->read_token << "|" << c.http->hosts.size() << "\n";
    }
    for (const auto& q : c.queues) {
        o << "queue " << q.name << "|" << q.table << "|" << q.id << "|" << q.due.text << "|"
          << q.order_by.size() << "|" << static_cast<int>(q.claim) << "|" << q.batch << "|"
          << q.lease.count() << "|" << q.max_lease.count() << "|" << q.max_backlog << "|"
          << (q.rate ? std::to_string(q.rate->count) + "/" + std::to_string(q.rate->per.count())
                     : "-")
          << "|" << (q.on_success ? q.on_success->text : "-") << "|"
          << (q.on_dead ? q.on_dead->text : "-") << "|" << (q.due_since ? q.due_since->text : "-")
          << "|" << q.retry.base.count() << "|" << q.retry.cap.count() << "|"
          << q.retry.max_attempts << "|" << q.retry.max_delay.count() << "|" << q.poll_min.count()
          << "|" << q.poll_max.count() << "|" << q.reap_interval.count() << "|"
          << q.leader_timeout.count() << "|" << q.columns.token << "|" << q.columns.lease << "|"
          << q.columns.attempts << "|" << q.columns.error << "|" << q.columns.dead << "|"
          << q.columns.lease_index << "|" << q.shards.size() << "\n";
        for (const auto& s : q.shards)
            o << "shard " << s.name << "|" << dump(s.mysql) << "|" << s.table << "\n";
    }
    return o.str();
}

// A key as the table writes it: the queue's and the shard's place generic, a shard's own mysql
// keys as the top-level ones they override.
std::string generic(const std::string& accepted) {
    static const std::regex queue(R"(^queues\.[^.]+)");
    static const std::regex shard(R"(\.shards\[\d+\])");
    static const std::regex shard_mysql(R"(^queues\.<queue>\.shards\[\]\.mysql\.)");
    auto key = std::regex_replace(accepted, queue, "queues.<queue>");
    key = std::regex_replace(key, shard, ".shards[]");
    return std::regex_replace(key, shard_mysql, "mysql.");
}

std::string literal_default(const std::string& cell) {
    static const std::regex literal(R"(^`([^`]*)`$)");
    std::smatch m;
    return std::regex_match(cell, m, literal) ? std::string(m[1]) : "";
}

}  // namespace

TEST_CASE("docs: docs/configuration.md lists every key the config parser accepts, with its default",
          "[docs]") {
    const auto rows = documented_keys();
    REQUIRE(rows.size() > 40);
    std::set<std::string> documented, accepted;
    for (const auto& row : rows) {
        documented.insert(row.key);
        const auto value = literal_default(row.default_);
        const auto text = config_with(row.key, value.empty() ? "1" : value);
        for (const auto& key : rowpump::config_keys_accepted(text)) accepted.insert(generic(key));
        if (value.empty()) continue;
        INFO(row.key << ": documented default " << value);
        rowpump::Config with, without;
        INFO(text);
        REQUIRE_NOTHROW(with = rowpump::parse_config(text, "with.yaml"));
        const auto base = config_with(row.key, "");
        INFO(base);
        REQUIRE_NOTHROW(without = rowpump::parse_config(base, "without.yaml"));
        CHECK(dump(with) == dump(without));
    }
    // A section (mysql, queues.<queue>.retry) is documented by its keys.
    auto covered = [&](const std::string& key) {
        const auto below = documented.lower_bound(key + ".");
        return documented.count(key) == 1 ||
               (below != documented.end() && below->rfind(key + ".", 0) == 0);
    };
    for (const auto& key : accepted) {
        INFO("the parser accepts " << key);
        CHECK(covered(key));
    }
    for (const auto& key : documented) {
        INFO("docs/configuration.md lists " << key);
        CHECK(accepted.count(key) == 1);
    }
}

TEST_CASE(
    "docs: docs/operations.md documents every subcommand, option and flag of the command line",
    "[docs]") {
    const auto commands = section(read_source("docs/operations.md"), "## Commands");
    REQUIRE(!commands.empty());
    const auto cl = rowpump::make_command_line();
    auto documented = [&](const CLI::Option* option) {
        if (option->get_positional()) {
            // "queue" as QUEUE, "ids" as ID...
            auto name = option->get_name();
            for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            if (name.size() > 1 && name.back() == 'S') name.pop_back();
            return commands.find(name) != std::string::npos;
        }
        for (const auto& name : option->get_lnames()) {
            if (commands.find("--" + name) == std::string::npos) return false;
        }
        for (const auto& name : option->get_snames()) {
            if (!std::regex_search(commands, std::regex("(^|[^-\\w])-" + name + "\\b")))
                return false;
        }
        return true;
    };
    std::size_t checked = 0;
    for (const auto* option : cl->app.get_options()) {
        INFO("rowpump " << option->get_name());
        CHECK(documented(option));
        ++checked;
    }
    for (const auto* sub : cl->app.get_subcommands({})) {
        INFO("rowpump " << sub->get_name());
        CHECK(commands.find("`rowpump " + sub->get_name()) != std::string::npos);
        for (const auto* option : sub->get_options()) {
            INFO("rowpump " << sub->get_name() << " " << option->get_name());
            CHECK(documented(option));
            ++checked;
        }
    }
    CHECK(checked > 20);
}
