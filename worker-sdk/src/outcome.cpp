#include <utility>

#include "rowpump/worker.hpp"

namespace rowpump {

Outcome Outcome::success(std::map<std::string, std::string> values) {
    Outcome o;
    o.kind_ = Kind::success;
    o.values_ = std::move(values);
    return o;
}

Outcome Outcome::retry(std::string reason, std::optional<milliseconds> delay) {
    Outcome o;
    o.kind_ = Kind::retry;
    o.reason_ = std::move(reason);
    o.delay_ = delay;
    return o;
}

Outcome Outcome::fail(std::string reason) {
    Outcome o;
    o.kind_ = Kind::fail;
    o.reason_ = std::move(reason);
    return o;
}

}  // namespace rowpump
