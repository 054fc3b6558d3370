#pragma once

// The whole contract between the dispatcher and workers, one concept per header: key names,
// messages, scripts, the meta and stats hashes, and what a report may carry. Both sides use
// these and spell none of it themselves.

#include "rowpump/common/keys.hpp"          // IWYU pragma: export
#include "rowpump/common/messages.hpp"      // IWYU pragma: export
#include "rowpump/common/queue_meta.hpp"    // IWYU pragma: export
#include "rowpump/common/queue_stats.hpp"   // IWYU pragma: export
#include "rowpump/common/report_rules.hpp"  // IWYU pragma: export
#include "rowpump/common/scripts.hpp"       // IWYU pragma: export
