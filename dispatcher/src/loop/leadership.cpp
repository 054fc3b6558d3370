#include "rowpump/dispatcher/loop/leadership.hpp"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <random>

#include "rowpump/common/log_text.hpp"

namespace rowpump {

namespace {

std::string make_id() {
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    std::random_device random;
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%08x", random());
    return std::string(host[0] ? host : "unknown") + ":" + std::to_string(getpid()) + ":" + suffix;
}

}  // namespace

Leadership::Leadership(std::string queue, Millis timeout)
    : queue_(std::move(queue)), timeout_(timeout), id_(make_id()) {}

bool Leadership::update(const std::string& holder) {
    const bool leading = holder == id_;
    if (leading && !leading_) {
        spdlog::info("queue {}: took the leader lock as {} (leader_timeout {}); dispatching",
                     queue_, id_, format_duration(timeout_));
    } else if (!leading && leading_) {
        spdlog::info("queue {}: lost the leader lock to {}; standing by", queue_, log_text(holder));
    } else if (!leading && holder != holder_) {
        spdlog::info("queue {}: {} holds the leader lock; standing by", queue_, log_text(holder));
    }
    leading_ = leading;
    holder_ = holder;
    if (leading_) renewed_at_ = Clock::now();
    return leading_;
}

bool Leadership::renewal_due(TimePoint now) const {
    return !leading_ || now - renewed_at_ >= timeout_ / 2;
}

void Leadership::handed_over(const std::string& to) {
    spdlog::info("queue {}: handed the leader lock over to {}, whose dispatcher leads fewer shards",
                 queue_, to);
    leading_ = false;
    holder_ = to;
}

void Leadership::lost() {
    if (leading_) {
        spdlog::info("queue {}: lost the leader lock (a write it fences was refused); standing by",
                     queue_);
    }
    leading_ = false;
    holder_.clear();
}

}  // namespace rowpump
