#pragma once

// The whole contract between the dispatcher and workers, one concept per header: key names,
// messages, scripts, the meta and stats hashes, and what a report may carry. Both sides use
// these and spell none of it themselves.

#include "rowpump/common/protocol/keys.hpp"              // IWYU pragma: export
#include "rowpump/common/protocol/messages.hpp"          // IWYU pragma: export
#include "rowpump/common/protocol/protocol_version.hpp"  // IWYU pragma: export
#include "rowpump/common/protocol/queue_meta.hpp"        // IWYU pragma: export
#include "rowpump/common/protocol/queue_stats.hpp"       // IWYU pragma: export
#include "rowpump/common/protocol/report_rules.hpp"      // IWYU pragma: export
#include "rowpump/common/protocol/scripts.hpp"           // IWYU pragma: export
#include "rowpump/common/protocol/worker_info.hpp"       // IWYU pragma: export
