#include "rowpump/common/backoff.hpp"

#include <algorithm>

namespace rowpump {

Millis Backoff::next() {
    Millis current = next_;
    next_ = std::min(max_, next_ * 2);
    return current;
}

}  // namespace rowpump
