#include "rowpump/dispatcher/cli/login_check.hpp"

#include <cppconn/exception.h>
#include <mysql_connection.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "rowpump/common/redis/redis.hpp"
#include "rowpump/common/redis/redis_route.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

namespace {

// ER_DBACCESS_DENIED_ERROR, ER_ACCESS_DENIED_ERROR, ER_ACCESS_DENIED_NO_PASSWORD_ERROR.
bool is_login_refused(const sql::SQLException& e) {
    const int code = e.getErrorCode();
    return code == 1044 || code == 1045 || code == 1698;
}

// Redis 6+ says WRONGPASS, or NOAUTH when no password was sent; older servers and a server
// without a password say "ERR invalid password" or "ERR AUTH <password> called without ...".
bool is_login_refused(const redis::ReplyError& e) {
    constexpr std::array<std::string_view, 5> kPrefixes = {
        "WRONGPASS", "NOAUTH", "ERR invalid password", "ERR invalid username", "ERR AUTH"};
    const std::string_view what = e.what();
    return std::any_of(kPrefixes.begin(), kPrefixes.end(),
                       [&](std::string_view p) { return what.substr(0, p.size()) == p; });
}

std::optional<std::string> mysql_refusal(const MysqlConfig& mysql) {
    MysqlThread thread;
    try {
        connect_mysql(mysql);
    } catch (const sql::SQLException& e) {
        if (is_login_refused(e)) {
            return "MySQL at " + mysql.host + ":" + std::to_string(mysql.port) +
                   " refused the login of user '" + mysql.user + "' to database '" +
                   mysql.database + "': " + describe(e) +
                   "; check mysql.user, mysql.password and the user's grants";
        }
    }
    return std::nullopt;
}

std::optional<std::string> redis_refusal(const RedisAddress& redis) {
    try {
        redis::Connection::connect(redis).command({"PING"});
    } catch (const redis::ReplyError& e) {
        if (is_login_refused(e)) {
            return "Redis at " + redis::describe(redis) + " refused the login: " + e.what() +
                   "; check redis.user and redis.password";
        }
    } catch (const redis::IoError&) {
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> refused_login(const Config& config) {
    for (const auto& server : configs_by_server(config)) {
        if (auto refusal = mysql_refusal(server.mysql)) return refusal;
    }
    return redis_refusal(config.redis);
}

}  // namespace rowpump
