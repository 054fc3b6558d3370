#include "config/config_sections.hpp"

namespace rowpump {

namespace {

// A non-empty list of "host:port" (IPv6 as "[::1]:port").
std::vector<RedisEndpoint> read_endpoints(const yaml::Reader& r, const yaml::Item& item) {
    if (!item.node.IsSequence() || item.node.size() == 0)
        r.fail(item, "must be a non-empty list of \"host:port\", got " + yaml::describe(item.node));
    std::vector<RedisEndpoint> endpoints;
    for (std::size_t i = 0; i < item.node.size(); ++i) {
        const yaml::Item element{item.node[i], item.key + "[" + std::to_string(i) + "]"};
        const auto text = r.nonempty_string(element);
        RedisEndpoint endpoint;
        if (text.find(':') == std::string::npos ||
            !parse_listen(text, endpoint.host, endpoint.port)) {
            r.fail(element, "must be \"host:port\", got '" + text + "'");
        }
        endpoints.push_back(std::move(endpoint));
    }
    return endpoints;
}

}  // namespace

RedisAddress read_redis(const yaml::Reader& r, const yaml::Item& item) {
    yaml::Map map(
        r, item,
        {"host", "port", "sentinels", "master", "cluster", "user", "password", "connect_timeout"});
    RedisAddress redis;
    if (auto v = map.get("host")) redis.host = r.nonempty_string(*v);
    if (auto v = map.get("port")) redis.port = r.port(*v);
    if (auto v = map.get("sentinels")) redis.sentinels = read_endpoints(r, *v);
    if (auto v = map.get("master")) redis.master = r.nonempty_string(*v);
    if (auto v = map.get("cluster")) redis.cluster = read_endpoints(r, *v);
    if (auto v = map.get("user")) redis.user = r.string(*v);
    if (auto v = map.get("password")) redis.password = r.string(*v);
    if (auto v = map.get("connect_timeout")) redis.connect_timeout = r.positive_duration(*v);
    // One shape only: the server is named once.
    const auto host = map.get("host") ? map.get("host") : map.get("port");
    if (host && (!redis.sentinels.empty() || !redis.cluster.empty()))
        r.fail(*host, "host and port name a single server; leave them out with " +
                          std::string(redis.cluster.empty() ? "sentinels" : "cluster"));
    if (!redis.sentinels.empty() && !redis.cluster.empty())
        r.fail(*map.get("cluster"), "sentinels and cluster exclude each other");
    if (redis.sentinels.empty() && !redis.master.empty())
        r.fail(*map.get("master"), "needs sentinels (the Sentinel group that knows it)");
    if (!redis.sentinels.empty() && redis.master.empty())
        r.fail(*map.get("sentinels"), "needs master (the name the sentinels know it by)");
    return redis;
}

}  // namespace rowpump
