#pragma once

// Pausing a queue: rowpump:{q}:paused exists while the queue is paused; its value says who
// paused it and when ("<who> <Unix ms>"), for people looking at Redis. Every dispatcher
// checks it at the start of each cycle and, while it is there, claims and pushes nothing;
// outcomes are still applied and dead workers' tasks still taken back, so workers finish
// what they hold and then wait on an empty ready list.

#include <optional>
#include <string>
#include <string_view>

#include "rowpump/common/redis/redis.hpp"

namespace rowpump::protocol {

// True if the queue was not paused before.
bool pause_queue(redis::Connection& redis, std::string_view queue, const std::string& who);
// True if the queue was paused before.
bool resume_queue(redis::Connection& redis, std::string_view queue);
// Who paused it, or nullopt when it runs.
std::optional<std::string> paused_by(redis::Connection& redis, std::string_view queue);

}  // namespace rowpump::protocol
