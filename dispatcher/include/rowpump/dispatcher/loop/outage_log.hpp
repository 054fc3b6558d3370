#pragma once

// How a queue reports a failure that lasts (a server down, a login refused mid-run): the
// first failed attempt in full, then one summary line per `summary_every` while it lasts,
// then the recovery with how long it took. The retries in between go to debug only, so an
// outage of an hour is a handful of lines, not thousands.

#include <spdlog/common.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "rowpump/dispatcher/loop/pacing.hpp"

namespace rowpump {

class OutageLog {
public:
    using Sink = std::function<void(spdlog::level::level_enum, const std::string&)>;

    // `subject` starts every line ("queue users"). The default sink is spdlog.
    OutageLog(std::string subject, Millis summary_every, Sink sink = {});

    // A failed attempt. `transient`: a server away or busy (warn); otherwise something a
    // retry may not fix (error).
    void failed(const std::string& what, bool transient, Millis retry_in,
                TimePoint now = Clock::now());
    // A successful attempt: ends the outage, if any.
    void succeeded(TimePoint now = Clock::now());

private:
    void line(spdlog::level::level_enum level, const std::string& text);

    std::string subject_;
    Millis summary_every_;
    Sink sink_;
    std::optional<TimePoint> since_;  // the first failed attempt of the current outage
    TimePoint last_line_{};
    std::int64_t attempts_ = 0;
    bool any_error_ = false;  // a failure that was not transient, since the last line
};

}  // namespace rowpump
