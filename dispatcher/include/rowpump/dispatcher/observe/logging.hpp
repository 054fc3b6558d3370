#pragma once

// The dispatcher's log: one spdlog logger, the default one, shared by every queue's thread,
// writing one line per event to stderr in one of three shapes:
//   text     "2026-11-23 12:00:00.123 info queue users: took the leader lock; dispatching"
//   journal  "<6>queue users: took the leader lock; dispatching": text under systemd
//            (JOURNAL_STREAM names our stderr), with the syslog priority journald reads, so
//            `journalctl -p warning` works, and no timestamp of our own (journald keeps one)
//   json     {"time":"...","level":"info","queue":"users","event":"took the leader lock; ...",
//            "fields":{"thread":1234}}: one object per line; "queue" is null for lines that
//            are about no queue

#include <string>

namespace rowpump {

// `level` is one of Config::log_level's values; `format` is "text" or "json" (text turns into
// journal under systemd).
void setup_logging(const std::string& level, const std::string& format = "text");

// True when stderr is the stream JOURNAL_STREAM ("<device>:<inode>") names.
bool stderr_is_journal();

}  // namespace rowpump
