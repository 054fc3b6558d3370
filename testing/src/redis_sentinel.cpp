#include "rowpump/testing/redis_sentinel.hpp"

#include <stdexcept>

#include "rowpump/testing/eventually.hpp"

namespace rowpump::testing {

namespace {

// A field of INFO's text ("role", "master_link_status"), or "" when absent.
std::string info_field(int port, const std::string& section, const std::string& field) {
    const auto text = connect_redis_port(port).command({"INFO", section}).string();
    const auto at = text.find(field + ":");
    if (at == std::string::npos) return "";
    const auto begin = at + field.size() + 1;
    return text.substr(begin, text.find_first_of("\r\n", begin) - begin);
}

std::string sentinel_config(int port, const std::string& dir, int master_port) {
    const std::string m = SentinelGroup::kMaster;
    return "port " + std::to_string(port) + "\nbind 127.0.0.1\ndaemonize no\ndir " + dir +
           "\nsentinel monitor " + m + " 127.0.0.1 " + std::to_string(master_port) +
           " 2\nsentinel down-after-milliseconds " + m + " 1000\nsentinel failover-timeout " + m +
           " 10000\nsentinel parallel-syncs " + m + " 1\n";
}

bool ready(int sentinel_port) {
    auto s = connect_redis_port(sentinel_port);
    return !s.command({"SENTINEL", "REPLICAS", SentinelGroup::kMaster}).value().elements.empty() &&
           s.command({"SENTINEL", "SENTINELS", SentinelGroup::kMaster}).value().elements.size() ==
               2;
}

}  // namespace

SentinelGroup::SentinelGroup() {
    servers_.push_back(std::make_unique<RedisServer>());
    const int master_port = servers_[0]->port();
    servers_.push_back(std::make_unique<RedisServer>(
        std::vector<std::string>{"--replicaof", "127.0.0.1", std::to_string(master_port)}));
    const auto program = find_server_program("redis-sentinel");
    for (int i = 0; i < 3; ++i) {
        const int port = free_port();
        const auto config = dir_.file("sentinel-" + std::to_string(i) + ".conf");
        write_file(config, sentinel_config(port, dir_.path(), master_port));
        sentinel_ports_.push_back(port);
        sentinels_.push_back(std::make_unique<ChildProcess>(
            std::vector<std::string>{program, config},
            log_to(dir_.file("sentinel-" + std::to_string(i) + ".log"))));
    }
    const bool up = eventually(
        60s,
        [&] {
            try {
                if (info_field(servers_[1]->port(), "replication", "master_link_status") != "up")
                    return false;
                for (int port : sentinel_ports_) {
                    if (!ready(port)) return false;
                }
                return true;
            } catch (const redis::Error&) {
                return false;
            }
        },
        100ms);
    if (!up) throw std::runtime_error("the Sentinel group did not come up: " + describe());
}

SentinelGroup::~SentinelGroup() = default;

RedisAddress SentinelGroup::address() const {
    RedisAddress a;
    for (int port : sentinel_ports_) a.sentinels.push_back({"127.0.0.1", port});
    a.master = kMaster;
    return a;
}

int SentinelGroup::named_master_port() {
    int named = 0;
    for (int port : sentinel_ports_) {
        try {
            auto reply = connect_redis_port(port)
                             .command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", kMaster})
                             .strings();
            const int p = reply.size() == 2 ? std::stoi(reply[1]) : 0;
            if (named != 0 && p != named) return 0;
            named = p;
        } catch (const redis::Error&) {
            return 0;
        }
    }
    return named;
}

RedisServer& SentinelGroup::master() {
    RedisServer* found = nullptr;
    eventually(30s, [&] {
        const int port = named_master_port();
        for (auto& s : servers_) {
            if (s->port() == port && s->running() &&
                info_field(port, "replication", "role") == "master")
                found = s.get();
        }
        return found != nullptr;
    });
    if (!found) throw std::runtime_error("no agreed master: " + describe());
    return *found;
}

RedisServer& SentinelGroup::other(const RedisServer& server) {
    return servers_[0].get() == &server ? *servers_[1] : *servers_[0];
}

void SentinelGroup::wait_for_master_other_than(int old_port, bool old_becomes_replica) {
    const bool done = eventually(
        60s,
        [&] {
            try {
                const int port = named_master_port();
                if (port == 0 || port == old_port) return false;
                if (info_field(port, "replication", "role") != "master") return false;
                return !old_becomes_replica ||
                       info_field(old_port, "replication", "master_link_status") == "up";
            } catch (const redis::Error&) {
                return false;
            }
        },
        100ms);
    if (!done) throw std::runtime_error("the failover did not complete: " + describe());
}

void SentinelGroup::failover() {
    const int old_port = master().port();
    connect_redis_port(sentinel_ports_[0]).command({"SENTINEL", "FAILOVER", kMaster});
    wait_for_master_other_than(old_port, true);
}

void SentinelGroup::kill_master() {
    auto& old = master();
    old.kill();
    wait_for_master_other_than(old.port(), false);
}

std::string SentinelGroup::describe() {
    std::string out = "sentinels name port " + std::to_string(named_master_port());
    for (auto& s : servers_) {
        out += "; " + std::to_string(s->port()) + ": ";
        try {
            out += s->running() ? info_field(s->port(), "replication", "role") : "down";
        } catch (const std::exception& e) {
            out += e.what();
        }
    }
    for (std::size_t i = 0; i < sentinel_ports_.size(); ++i)
        out += "\nsentinel " + std::to_string(i) + " log:\n" +
               file_tail(dir_.file("sentinel-" + std::to_string(i) + ".log"), 15);
    return out;
}

}  // namespace rowpump::testing
