#include "rowpump/dispatcher/loop/queue_links.hpp"

#include "rowpump/dispatcher/mysql/mysql_session.hpp"
#include "rowpump/dispatcher/mysql/outcome_store.hpp"
#include "rowpump/dispatcher/redis/redis_queue.hpp"

namespace rowpump {

namespace {

class LiveMysql : public MysqlSide {
public:
    LiveMysql(const Config& config, const QueueConfig& queue, ClaimPath& path)
        : path_(path),
          claim_session_(config, queue),
          reaped_(claim_session_, path.outcome_rules()),
          outcome_session_(config, queue),
          outcomes_(outcome_session_, path.outcome_rules()) {
        path_.open(claim_session_);
    }
    ~LiveMysql() override { path_.close(); }  // its store goes before the session

    Outcomes& outcomes() override { return outcomes_; }
    Outcomes& reaped_outcomes() override { return reaped_; }

private:
    ClaimPath& path_;
    MysqlSession claim_session_;
    OutcomeStore reaped_;
    MysqlSession outcome_session_;
    OutcomeStore outcomes_;
};

class LiveLinks : public QueueLinks {
public:
    LiveLinks(const Config& config, const QueueConfig& queue) : config_(config), queue_(queue) {}

    std::unique_ptr<MysqlSide> open_mysql(ClaimPath& path) override {
        return std::make_unique<LiveMysql>(config_, queue_, path);
    }
    std::unique_ptr<RedisSide> open_redis(const std::string& leader_id) override {
        return std::make_unique<RedisQueue>(RedisQueue::open(config_.redis, queue_, leader_id));
    }

private:
    const Config& config_;
    const QueueConfig& queue_;
};

}  // namespace

std::unique_ptr<QueueLinks> live_links(const Config& config, const QueueConfig& queue) {
    return std::make_unique<LiveLinks>(config, queue);
}

}  // namespace rowpump
