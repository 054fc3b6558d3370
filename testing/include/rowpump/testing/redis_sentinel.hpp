#pragma once

// A Redis Sentinel group on loopback for tests: a master, a replica and three sentinels
// (Debian's redis-sentinel, quorum 2) on free ports with their own directories, declaring a
// master down after one second. Start and fail it over from the test's main thread.

#include <memory>
#include <string>
#include <vector>

#include "rowpump/testing/servers.hpp"

namespace rowpump::testing {

class SentinelGroup {
public:
    static constexpr const char* kMaster = "rowpump";

    // Returns once the replica is in sync and every sentinel knows the replica and the other
    // sentinels, so a failover can start at once.
    SentinelGroup();
    ~SentinelGroup();
    SentinelGroup(const SentinelGroup&) = delete;
    SentinelGroup& operator=(const SentinelGroup&) = delete;

    // sentinels + master, as the dispatcher and the SDK take it.
    RedisAddress address() const;
    // The server every sentinel names master, once they agree and it says so itself.
    RedisServer& master();
    // SENTINEL FAILOVER; returns once the other server is the master and the old one
    // replicates from it.
    void failover();
    // kill -9 of the master; returns once the sentinels have promoted the replica. The killed
    // server stays down.
    void kill_master();
    std::string describe();  // who is what, for failure messages

private:
    int named_master_port();  // 0 while the sentinels disagree
    RedisServer& other(const RedisServer& server);
    void wait_for_master_other_than(int old_port, bool old_becomes_replica);

    std::vector<std::unique_ptr<RedisServer>> servers_;  // [0] the first master
    TempDir dir_{"rowpump-sentinel-"};
    std::vector<int> sentinel_ports_;
    std::vector<std::unique_ptr<ChildProcess>> sentinels_;
};

}  // namespace rowpump::testing
