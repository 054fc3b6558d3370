#pragma once

// A Redis Cluster on loopback for tests: six `redis-server --cluster-enabled yes` on free
// ports with their own directories, made into three masters with a replica each by
// `redis-cli --cluster create`. Reshard and fail it over from the test's main thread.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rowpump/testing/servers.hpp"

namespace rowpump::testing {

class RedisCluster {
public:
    // Returns once every node sees all 16384 slots served and the cluster state ok.
    RedisCluster();
    ~RedisCluster();
    RedisCluster(const RedisCluster&) = delete;
    RedisCluster& operator=(const RedisCluster&) = delete;

    // cluster: every node, as the dispatcher and the SDK take it.
    RedisAddress address() const;
    // The master serving `slot`, as the node on port `asked` (0: the first one up) sees it.
    int owner_port(int slot, int asked = 0);
    std::vector<int> master_ports();
    std::string node_id(int port);
    // Moves `slot` to the master on `to_port` as redis-cli --cluster reshard does: IMPORTING
    // and MIGRATING, MIGRATE of its keys `batch` at a time (calling `between` after each
    // batch), then SETSLOT NODE on every master.
    void migrate_slot(int slot, int to_port, int batch = 1,
                      const std::function<void()>& between = {});
    // CLUSTER FAILOVER on a replica of the master on `master_port`; returns once it serves
    // the master's slots. Returns the new master's port.
    int failover(int master_port);
    RedisServer& node(int port);
    std::string describe();  // CLUSTER NODES as one node sees it, for failure messages

private:
    void wait_until_ok();

    std::vector<std::unique_ptr<RedisServer>> nodes_;
};

}  // namespace rowpump::testing
