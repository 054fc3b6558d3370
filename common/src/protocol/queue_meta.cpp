#include "rowpump/common/protocol/queue_meta.hpp"

#include <algorithm>

namespace rowpump::protocol {

namespace {

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ",") + name;
    return out;
}

std::vector<std::string> split_names(std::string_view csv) {
    std::vector<std::string> names;
    std::size_t start = 0;
    while (start <= csv.size()) {
        auto end = std::min(csv.find(',', start), csv.size());
        std::string name(csv.substr(start, end - start));
        name.erase(0, name.find_first_not_of(' '));
        name.erase(name.find_last_not_of(' ') + 1);
        if (!name.empty()) names.push_back(std::move(name));
        start = end + 1;
    }
    return names;
}

}  // namespace

std::vector<std::string> meta_fields(const QueueMeta& meta) {
    return {kMetaValues,   joined(meta.values),
            kMetaLease,    meta.lease ? format_duration(*meta.lease) : "",
            kMetaTable,    meta.table,
            kMetaProtocol, std::to_string(kProtocolVersion)};
}

QueueMeta parse_meta(const std::vector<std::string>& fields) {
    QueueMeta meta;
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
        const auto& field = fields[i];
        const auto& value = fields[i + 1];
        if (field == kMetaValues) meta.values = split_names(value);
        if (field == kMetaLease) meta.lease = parse_duration(value);
        if (field == kMetaTable) meta.table = value;
    }
    return meta;
}

}  // namespace rowpump::protocol
