// The queue's hashes as a reader finds them in Redis (HGETALL of rowpump:{q}:meta, :gauges and
// :dispatchers), written by anyone who may write those keys: the parsers never crash, and
// what they accept is within bounds.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "rowpump/common/protocol/queue_gauges.hpp"
#include "rowpump/common/protocol/queue_meta.hpp"

using namespace rowpump;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // Fields and values, each ended by a NUL byte: HGETALL's reply.
    std::vector<std::string> fields{""};
    for (std::size_t i = 0; i < size; ++i) {
        if (data[i] == 0) {
            fields.emplace_back();
        } else {
            fields.back().push_back(static_cast<char>(data[i]));
        }
    }
    if (fields.size() % 2 == 1) fields.pop_back();

    const auto meta = protocol::parse_meta(fields);
    if (meta.lease) FUZZ_CHECK(meta.lease->count() >= 0);
    const auto again = protocol::parse_meta(protocol::meta_fields(meta));
    FUZZ_CHECK(again.values == meta.values && again.lease == meta.lease &&
               again.table == meta.table);

    if (const auto gauges = protocol::parse_gauges(fields)) {
        if (gauges->oldest_due_age) FUZZ_CHECK(gauges->oldest_due_age->count() >= 0);
    }
    for (const auto& entry : protocol::parse_dispatchers(fields)) {
        FUZZ_CHECK(!entry.id.empty());
        FUZZ_CHECK(entry.role == "leader" || entry.role == "standby");
    }
    return 0;
}
