#pragma once

#include "rowpump/common/duration.hpp"

namespace rowpump {

// Doubling delay from `min` to `max`, for waiting out an outage; reset() starts over.
class Backoff {
public:
    Backoff(Millis min, Millis max) : min_(min), max_(max), next_(min) {}
    Millis next();
    void reset() { next_ = min_; }

private:
    Millis min_, max_, next_;
};

}  // namespace rowpump
