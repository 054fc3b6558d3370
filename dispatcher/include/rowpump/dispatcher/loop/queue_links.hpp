#pragma once

// What a QueueRunner connects to: live_links() opens MySQL and Redis; a unit test gives fakes.

#include <memory>
#include <string>

#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/loop/claim_path.hpp"
#include "rowpump/dispatcher/loop/outcomes.hpp"
#include "rowpump/dispatcher/redis/redis_side.hpp"

namespace rowpump {

// The MySQL side of a runner, on two sessions: the claim session (the claim path's store, and
// the outcomes of tasks taken back from dead workers) and the outcome session (the done list's
// outcomes), so that an outcome batch can run beside a claim. Dropped whole after a MySQL error.
class MysqlSide {
public:
    virtual ~MysqlSide() = default;
    // The done list's outcomes, on the outcome session.
    virtual Outcomes& outcomes() = 0;
    // Outcomes of tasks taken back from dead workers, on the claim session.
    virtual Outcomes& reaped_outcomes() = 0;
};

class QueueLinks {
public:
    virtual ~QueueLinks() = default;
    // Connects the MySQL side; `path` opens its store on the claim session, and is closed
    // when the side goes. Throws sql::SQLException.
    virtual std::unique_ptr<MysqlSide> open_mysql(ClaimPath& path) = 0;
    // Connects the Redis side; `leader_id`: this dispatcher's id in the leader lock.
    virtual std::unique_ptr<RedisSide> open_redis(const std::string& leader_id) = 0;
};

// The servers of `config` (MysqlSession, OutcomeStore, RedisQueue); `queue` outlives it.
std::unique_ptr<QueueLinks> live_links(const Config& config, const QueueConfig& queue);

}  // namespace rowpump
