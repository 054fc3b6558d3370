#include "rowpump/testing/redis_cluster.hpp"

#include <sstream>
#include <stdexcept>

#include "rowpump/testing/eventually.hpp"

namespace rowpump::testing {

namespace {

// CLUSTER NODES lines: <id> <ip:port@bus> <flags> <master id> ... <slots...>
std::vector<std::vector<std::string>> cluster_nodes(int port) {
    std::vector<std::vector<std::string>> out;
    std::istringstream lines(connect_redis_port(port).command({"CLUSTER", "NODES"}).string());
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::vector<std::string> fields;
        for (std::string w; words >> w;) fields.push_back(w);
        if (fields.size() >= 8) out.push_back(std::move(fields));
    }
    return out;
}

int port_of(const std::string& address) {
    const auto colon = address.find(':');
    return std::stoi(address.substr(colon + 1, address.find('@') - colon - 1));
}

}  // namespace

RedisCluster::RedisCluster() {
    for (int i = 0; i < 6; ++i) {
        // The bus port is our own too (by default port + 10000, out of range for high ports).
        nodes_.push_back(std::make_unique<RedisServer>(std::vector<std::string>{
            "--cluster-enabled", "yes", "--cluster-port", std::to_string(free_port()),
            "--cluster-node-timeout", "2000", "--cluster-replica-validity-factor", "0"}));
    }
    std::vector<std::string> argv{find_server_program("redis-cli"), "--cluster", "create"};
    for (auto& n : nodes_) argv.push_back("127.0.0.1:" + std::to_string(n->port()));
    for (const char* a : {"--cluster-replicas", "1", "--cluster-yes"}) argv.push_back(a);
    TempDir dir("rowpump-cluster-create-");
    ChildProcess create(argv, log_to(dir.file("create.log")));
    auto status = create.wait(60s);
    if (!status || !status->success())
        throw std::runtime_error("redis-cli --cluster create failed: " +
                                 file_tail(dir.file("create.log")));
    wait_until_ok();
}

RedisCluster::~RedisCluster() = default;

void RedisCluster::wait_until_ok() {
    const bool ok = eventually(
        60s,
        [&] {
            try {
                for (auto& n : nodes_) {
                    if (!n->running()) continue;
                    const auto info =
                        connect_redis_port(n->port()).command({"CLUSTER", "INFO"}).string();
                    if (info.find("cluster_state:ok") == std::string::npos ||
                        info.find("cluster_slots_ok:16384") == std::string::npos)
                        return false;
                }
                return true;
            } catch (const redis::Error&) {
                return false;
            }
        },
        100ms);
    if (!ok) throw std::runtime_error("the cluster is not ok: " + describe());
}

RedisAddress RedisCluster::address() const {
    RedisAddress a;
    for (auto& n : nodes_) a.cluster.push_back({"127.0.0.1", n->port()});
    return a;
}

RedisServer& RedisCluster::node(int port) {
    for (auto& n : nodes_) {
        if (n->port() == port) return *n;
    }
    throw std::runtime_error("no cluster node on port " + std::to_string(port));
}

int RedisCluster::owner_port(int slot, int asked) {
    if (asked == 0) {
        for (auto& n : nodes_) {
            if (n->running()) {
                asked = n->port();
                break;
            }
        }
    }
    const auto slots = connect_redis_port(asked).command({"CLUSTER", "SLOTS"}).value();
    for (const auto& range : slots.elements) {
        if (range.elements[0].integer <= slot && slot <= range.elements[1].integer)
            return static_cast<int>(range.elements[2].elements[1].integer);
    }
    return 0;
}

std::vector<int> RedisCluster::master_ports() {
    // Each node's own word (ROLE): another node's view of it may lag behind by a gossip round.
    std::vector<int> out;
    for (auto& n : nodes_) {
        if (!n->running()) continue;
        const auto role = connect_redis_port(n->port()).command({"ROLE"}).value();
        if (!role.elements.empty() && role.elements[0].text == "master") out.push_back(n->port());
    }
    return out;
}

std::string RedisCluster::node_id(int port) {
    return connect_redis_port(port).command({"CLUSTER", "MYID"}).string();
}

void RedisCluster::migrate_slot(int slot, int to_port, int batch,
                                const std::function<void()>& between) {
    const int from_port = owner_port(slot);
    const auto from_id = node_id(from_port), to_id = node_id(to_port);
    const auto s = std::to_string(slot);
    auto from = connect_redis_port(from_port);
    connect_redis_port(to_port).command({"CLUSTER", "SETSLOT", s, "IMPORTING", from_id});
    from.command({"CLUSTER", "SETSLOT", s, "MIGRATING", to_id});
    for (;;) {
        auto keys = from.command({"CLUSTER", "GETKEYSINSLOT", s, std::to_string(batch)}).strings();
        if (keys.empty()) break;
        std::vector<std::string> migrate{"MIGRATE", "127.0.0.1", std::to_string(to_port), "", "0",
                                         "5000",    "KEYS"};
        migrate.insert(migrate.end(), keys.begin(), keys.end());
        from.command(migrate);
        if (between) between();
    }
    // The new owner first, as redis-cli does, so that no node points back at the old one.
    connect_redis_port(to_port).command({"CLUSTER", "SETSLOT", s, "NODE", to_id});
    from.command({"CLUSTER", "SETSLOT", s, "NODE", to_id});
    for (int port : master_ports()) {
        if (port != to_port && port != from_port)
            connect_redis_port(port).command({"CLUSTER", "SETSLOT", s, "NODE", to_id});
    }
}

int RedisCluster::failover(int master_port) {
    const auto master_id = node_id(master_port);
    int replica = 0;
    for (const auto& f : cluster_nodes(master_port)) {
        if (f[3] == master_id) replica = port_of(f[1]);
    }
    if (replica == 0) throw std::runtime_error("no replica of " + std::to_string(master_port));
    connect_redis_port(replica).command({"CLUSTER", "FAILOVER"});
    const bool done = eventually(
        30s,
        [&] {
            try {
                const auto nodes = cluster_nodes(replica);
                for (const auto& f : nodes) {
                    if (port_of(f[1]) == replica) return f[2].find("master") != std::string::npos;
                }
                return false;
            } catch (const redis::Error&) {
                return false;
            }
        },
        100ms);
    if (!done) throw std::runtime_error("the cluster failover did not complete: " + describe());
    wait_until_ok();
    return replica;
}

std::string RedisCluster::describe() {
    for (auto& n : nodes_) {
        try {
            if (n->running())
                return connect_redis_port(n->port()).command({"CLUSTER", "NODES"}).string();
        } catch (const std::exception& e) {
            return e.what();
        }
    }
    return "no node is running";
}

}  // namespace rowpump::testing
