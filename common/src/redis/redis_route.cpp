#include "rowpump/common/redis/redis_route.hpp"

#include <memory>

#include "rowpump/common/redis/cluster_slot.hpp"

namespace rowpump::redis {

namespace {

std::string list(const std::vector<RedisEndpoint>& nodes) {
    std::string out;
    for (const auto& node : nodes) out += (out.empty() ? "" : ", ") + to_string(node);
    return out;
}

// Sentinels usually have no password of their own; the data nodes' login is not sent there.
RedisAddress sentinel_login(const RedisAddress& address) {
    RedisAddress login;
    login.connect_timeout = address.connect_timeout;
    return login;
}

RedisEndpoint sentinel_master(const RedisAddress& address) {
    std::string why;
    for (const auto& sentinel : address.sentinels) {
        try {
            auto conn =
                Connection::open(sentinel, sentinel_login(address), address.connect_timeout);
            auto reply =
                conn.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", address.master}).strings();
            std::optional<int> port;
            if (reply.size() == 2) port = parse_port(reply[1]);
            if (port) return {reply[0], *port};
            why += "; " + to_string(sentinel) + ": does not know master '" + address.master + "'";
        } catch (const Error& e) {
            why += "; " + to_string(sentinel) + ": " + e.what();
        }
    }
    throw IoError("no sentinel named master '" + address.master + "'" + why);
}

// CLUSTER SLOTS: [[start, end, [host, port, id, ...] (master), replicas...], ...]
std::optional<RedisEndpoint> owner_in(const Value& slots, int slot, const RedisEndpoint& asked) {
    for (const auto& range : slots.elements) {
        const auto& e = range.elements;
        if (e.size() < 3 || e[0].integer > slot || e[1].integer < slot) continue;
        const auto& master = e[2].elements;
        if (master.size() < 2) continue;
        return RedisEndpoint{master[0].text.empty() ? asked.host : master[0].text,
                             static_cast<int>(master[1].integer)};
    }
    return std::nullopt;
}

RedisEndpoint slot_owner(const RedisAddress& address, int slot) {
    std::string why;
    for (const auto& seed : address.cluster) {
        try {
            auto conn = Connection::open(seed, address, address.connect_timeout);
            if (auto owner = owner_in(conn.command({"CLUSTER", "SLOTS"}).value(), slot, seed))
                return *owner;
            why += "; " + to_string(seed) + ": no node serves slot " + std::to_string(slot);
        } catch (const Error& e) {
            why += "; " + to_string(seed) + ": " + e.what();
        }
    }
    throw IoError("no cluster node said who serves slot " + std::to_string(slot) + why);
}

}  // namespace

std::string describe(const RedisAddress& address) {
    if (!address.sentinels.empty())
        return "Sentinel master '" + address.master + "' via " + list(address.sentinels);
    if (!address.cluster.empty()) return "Cluster via " + list(address.cluster);
    return to_string({address.host, address.port});
}

std::string address_problem(const RedisAddress& address) {
    auto endpoints_problem = [](const std::vector<RedisEndpoint>& nodes, const char* what) {
        for (const auto& node : nodes) {
            if (node.host.empty()) return std::string(what) + ": a host is empty";
            if (node.port < 1 || node.port > 65535)
                return std::string(what) + ": " + std::to_string(node.port) + " is not a TCP port";
        }
        return std::string();
    };
    if (!address.sentinels.empty() && !address.cluster.empty())
        return "redis.sentinels and redis.cluster exclude each other";
    if (address.sentinels.empty() != address.master.empty())
        return "redis.sentinels and redis.master go together";
    if (address.host.empty()) return "redis.host is required";
    if (address.port < 1 || address.port > 65535)
        return "redis.port " + std::to_string(address.port) + " is not a TCP port";
    if (address.connect_timeout.count() <= 0) return "redis.connect_timeout must be positive";
    auto problem = endpoints_problem(address.sentinels, "redis.sentinels");
    return problem.empty() ? endpoints_problem(address.cluster, "redis.cluster") : problem;
}

RedisEndpoint find_node(const RedisAddress& address, std::string_view key) {
    if (!address.sentinels.empty()) return sentinel_master(address);
    if (!address.cluster.empty()) return slot_owner(address, key_slot(key));
    return {address.host, address.port};
}

// Declared with Connection (redis.hpp), defined here with the routes it follows, so that redis.cpp
// depends on nothing here.
Connection Connection::connect_for(const RedisAddress& address, std::string_view key,
                                   std::chrono::milliseconds command_timeout) {
    Connection conn = open(find_node(address, key), address, command_timeout);
    if (!address.sentinels.empty()) conn.check_master();
    if (!address.cluster.empty()) conn.cluster_login_ = std::make_unique<RedisAddress>(address);
    return conn;
}

}  // namespace rowpump::redis
