#include "rowpump/testing/rowpump_config.hpp"

#include <sstream>

#include "rowpump/testing/servers.hpp"
#include "rowpump/testing/temp_dir.hpp"

namespace rowpump::testing {

ConfigSpec config_for(const MariaDb& mysql, const RedisServer& redis, const std::string& database,
                      std::vector<QueueSpec> queues) {
    ConfigSpec spec;
    spec.mysql_port = mysql.port();
    spec.redis_port = redis.port();
    spec.database = database;
    spec.user = MariaDb::kUser;
    spec.password = MariaDb::kPassword;
    spec.queues = std::move(queues);
    return spec;
}

std::vector<std::string> redis_lines_for(const RedisAddress& address) {
    auto list = [](const std::vector<RedisEndpoint>& nodes) {
        std::string out;
        for (const auto& n : nodes)
            out += (out.empty() ? "" : ", ") + yaml_quote(n.host + ":" + std::to_string(n.port));
        return "[" + out + "]";
    };
    std::vector<std::string> lines;
    if (!address.sentinels.empty()) {
        lines.push_back("sentinels: " + list(address.sentinels));
        lines.push_back("master: " + yaml_quote(address.master));
    }
    if (!address.cluster.empty()) lines.push_back("cluster: " + list(address.cluster));
    return lines;
}

std::string yaml_quote(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

namespace {

void render_queue(std::ostringstream& out, const QueueSpec& q) {
    out << "  " << q.name << ":\n";
    out << "    table: " << q.table << "\n";
    out << "    id: " << q.id << "\n";
    out << "    due: " << yaml_quote(q.due) << "\n";
    if (!q.order_by.empty()) out << "    order_by: " << yaml_quote(q.order_by) << "\n";
    out << "    batch: " << q.batch << "\n";
    out << "    lease: " << q.lease << "\n";
    out << "    max_backlog: " << q.max_backlog << "\n";
    if (!q.rate.empty()) out << "    rate: " << yaml_quote(q.rate) << "\n";
    if (!q.on_success.empty()) out << "    on_success: " << yaml_quote(q.on_success) << "\n";
    if (!q.on_dead.empty()) out << "    on_dead: " << yaml_quote(q.on_dead) << "\n";
    out << "    poll: { min: " << q.poll_min << ", max: " << q.poll_max << " }\n";
    // Empty: claim: mysql, the mode the tests were written for (the dispatcher's default until
    // it became redis); "default": no claim: key, the dispatcher's default.
    if (q.claim != "default") out << "    claim: " << (q.claim.empty() ? "mysql" : q.claim) << "\n";
    for (const auto& line : q.extra_lines) out << "    " << line << "\n";
}

}  // namespace

std::string render_config(const ConfigSpec& spec) {
    std::ostringstream out;
    out << "mysql:\n"
        << "  host: " << spec.mysql_host << "\n"
        << "  port: " << spec.mysql_port << "\n"
        << "  user: " << yaml_quote(spec.user) << "\n"
        << "  password: " << yaml_quote(spec.password) << "\n"
        << "  database: " << yaml_quote(spec.database) << "\n";
    for (const auto& line : spec.mysql_lines) out << "  " << line << "\n";
    out << "redis:\n";
    if (spec.redis_lines.empty()) {
        out << "  host: " << spec.redis_host << "\n"
            << "  port: " << spec.redis_port << "\n";
    }
    for (const auto& line : spec.redis_lines) out << "  " << line << "\n";
    if (!spec.redis_user.empty()) out << "  user: " << yaml_quote(spec.redis_user) << "\n";
    if (!spec.redis_password.empty())
        out << "  password: " << yaml_quote(spec.redis_password) << "\n";
    out << "log_level: " << spec.log_level << "\n";
    for (const auto& line : spec.extra_lines) out << line << "\n";
    out << "queues:\n";
    for (const auto& q : spec.queues) render_queue(out, q);
    return out.str();
}

std::string write_config(const std::string& path, const ConfigSpec& spec) {
    write_file(path, render_config(spec));
    return path;
}

}  // namespace rowpump::testing
