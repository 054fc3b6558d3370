// The dashboard's actions: POST /api/queues/<queue>/(pause|resume|retry|discard). Each needs
// http.actions and the header "Authorization: Bearer <http.token>", is logged at info with
// what it changed, and makes the observer look again at once.

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <mysql_connection.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "cli/queue_argument.hpp"
#include "mysql/revive.hpp"
#include "observe/http_limits.hpp"
#include "observe/http_routes.hpp"
#include "rowpump/common/log_text.hpp"
#include "rowpump/common/protocol/keys.hpp"
#include "rowpump/common/protocol/queue_pause.hpp"
#include "rowpump/dispatcher/mysql/mysql_connect.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

namespace rowpump {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxIds = 1000;

// A request the action cannot take: HTTP 400 with this message.
class BadRequest : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::vector<std::string> ids_of(const json& body) {
    if (!body.contains("ids") || !body["ids"].is_array() || body["ids"].empty())
        throw BadRequest("give \"ids\": a non-empty list of row ids");
    if (body["ids"].size() > kMaxIds)
        throw BadRequest("at most " + std::to_string(kMaxIds) + " ids at a time");
    std::vector<std::string> ids;
    for (const auto& id : body["ids"])
        ids.push_back(id.is_string() ? id.get<std::string>() : id.dump());
    return ids;
}

// The shard the body names ("shard"), or the queue itself without shards.
QueueSource source_of(const Config& config, const QueueConfig& queue, const json& body) {
    std::ostringstream problem;
    auto source =
        source_or_complain(config, queue, body.value("shard", std::string()), "\"shard\"", problem);
    if (!source) throw BadRequest(problem.str().substr(0, problem.str().size() - 1));
    return std::move(*source);
}

std::int64_t update_rows(const Config& config, const std::string& statement,
                         const std::vector<std::string>& ids) {
    MysqlThread mysql_thread;
    auto conn = connect_mysql(config.mysql);
    return prepare_bound(*conn, statement, ids)->executeUpdate();
}

// For the log and the answer: ids come from outside.
std::string list(const std::vector<std::string>& ids) {
    std::string out;
    for (std::size_t i = 0; i < ids.size() && i < 10; ++i)
        out += (i ? ", " : "") + log_text(ids[i], 64);
    return ids.size() > 10 ? out + ", ..." : out;
}

// Runs one action; returns what it changed, in words, for the log and the answer.
std::string run_action(const Config& full, const QueueConfig& named, const std::string& action,
                       const json& body, const std::string& who) {
    if (action == "pause" || action == "resume") {
        auto redis =
            redis::Connection::connect_for(full.redis, protocol::keys_for(named.name).prefix);
        const bool changed = action == "pause" ? protocol::pause_queue(redis, named.name, who)
                                               : protocol::resume_queue(redis, named.name);
        return std::string(action == "pause" ? "paused" : "resumed") +
               (changed ? "" : " (it already was)");
    }
    // Dead rows are changed on one shard: ids are per shard.
    const auto source = source_of(full, named, body);
    const auto& config = source.config;
    const auto& queue = source.queue;
    const std::string where = queue.shard ? "shard " + queue.shards[*queue.shard].name + ": " : "";
    if (action == "retry") {
        const bool all = body.value("all", false);
        const auto ids = all ? std::vector<std::string>{} : ids_of(body);
        MysqlThread mysql_thread;
        const Revived revived = revive_dead_rows(config, queue, ids, std::nullopt);
        if (!revived.committed()) throw BadRequest(explain_not_due(queue, revived, false));
        return where + "retry " + (all ? std::string("all dead rows") : "ids " + list(ids)) + ": " +
               std::to_string(revived.rows) + " dead row(s) due again";
    }
    const auto mode = body.value("mode", std::string("on_dead"));
    if (mode != "on_dead" && mode != "forget")
        throw BadRequest("\"mode\" is on_dead or forget, got '" + mode + "'");
    if (mode == "on_dead" && !queue.on_dead)
        throw BadRequest("queue " + queue.name + " has no on_dead clause: use mode forget");
    const auto ids = ids_of(body);
    const auto n =
        update_rows(config, QueueSql(queue).discard_ids(ids.size(), mode == "on_dead"), ids);
    return where + "discard (" + mode + ") ids " + list(ids) + ": " + std::to_string(n) +
           " dead row(s) discarded";
}

void answer(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

bool authorized(const HttpContext& context, const httplib::Request& req, httplib::Response& res) {
    if (!context.config.http->actions) {
        answer(res, 403, {{"error", "actions are off (http.actions in the config)"}});
        return false;
    }
    if (!has_token(context, req)) {
        context.refusals.refused(req.remote_addr, req.method + " " + req.path, 401,
                                 "wrong or missing token");
        answer(res, 401, {{"error", "wrong or missing token"}});
        return false;
    }
    return true;
}

// Holds one of the http_limits::kActions places while an action runs.
class ActionPlace {
public:
    explicit ActionPlace(const HttpContext& context)
        : running_(context.actions_running),
          taken_(running_.fetch_add(1) < http_limits::kActions) {}
    ~ActionPlace() { running_.fetch_sub(1); }
    ActionPlace(const ActionPlace&) = delete;
    ActionPlace& operator=(const ActionPlace&) = delete;
    bool taken() const { return taken_; }

private:
    std::atomic<std::size_t>& running_;
    bool taken_;
};

}  // namespace

bool constant_time_equal(const std::string& a, const std::string& b) noexcept {
    // Every byte of the longer one is looked at whatever matches; only the lengths can leak.
    const std::size_t n = std::max(a.size(), b.size());
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (std::size_t i = 0; i < n; ++i) {
        const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
        const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
        diff = static_cast<unsigned char>(diff | (x ^ y));
    }
    return diff == 0;
}

void add_action_routes(httplib::Server& server, const HttpContext& context) {
    server.Post(
        R"(/api/queues/([^/]+)/(pause|resume|retry|discard))",
        [&context](const httplib::Request& req, httplib::Response& res) {
            if (!authorized(context, req, res)) return;
            const ActionPlace place(context);
            if (!place.taken())
                return answer(res, 503, {{"error", "other actions are running, try again"}});
            const auto* queue = context.config.find_queue(req.matches[1].str());
            if (queue == nullptr) return answer(res, 404, {{"error", "unknown queue"}});
            const std::string action = req.matches[2].str();
            try {
                const json body = req.body.empty() ? json::object() : json::parse(req.body);
                if (!body.is_object()) throw BadRequest("the body must be a JSON object");
                const auto what = run_action(context.config, *queue, action, body,
                                             "dashboard from " + req.remote_addr);
                spdlog::info("http: queue {}: {} (dashboard, from {})", queue->name, what,
                             log_text(req.remote_addr));
                context.observer.refresh();
                answer(res, 200, {{"message", what}});
            } catch (const json::exception& e) {
                answer(res, 400, {{"error", std::string("bad JSON: ") + e.what()}});
            } catch (const BadRequest& e) {
                answer(res, 400, {{"error", e.what()}});
            } catch (const sql::SQLException& e) {
                answer(res, 503, {{"error", "MySQL: " + describe(e)}});
            } catch (const std::exception& e) {
                answer(res, 503, {{"error", std::string("Redis: ") + e.what()}});
            }
        });
}

}  // namespace rowpump
