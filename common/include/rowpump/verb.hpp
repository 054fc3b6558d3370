#pragma once

// What a report on a task says. The wire spells these "ok", "retry", "fail" and "extend"
// (see verb_name in the protocol); code and the public API call the first one success.

namespace rowpump {

enum class Verb {
    success,  // done: the queue's on_success is applied
    retry,    // try again later, as a failed attempt
    fail,     // give up: the row is dead
    extend,   // keep the claim longer; the task stays in hand
};

}  // namespace rowpump
