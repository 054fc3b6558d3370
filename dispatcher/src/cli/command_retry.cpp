#include <cppconn/exception.h>

#include <cstdint>
#include <ostream>

#include "cli/queue_argument.hpp"
#include "mysql/revive.hpp"
#include "rowpump/dispatcher/cli/commands.hpp"
#include "rowpump/dispatcher/mysql/mysql_errors.hpp"

namespace rowpump {

int command_retry(const Config& config, const std::string& queue_name, const std::string& shard,
                  const std::vector<std::string>& ids, bool all, const std::string& set_text,
                  std::ostream& out, std::ostream& err) {
    const auto* found = find_queue_or_complain(config, queue_name, err);
    if (found == nullptr) return 1;
    const auto source = source_or_complain(config, *found, shard, "--shard", err);
    if (!source) return 1;
    const auto* queue = &source->queue;
    if (all == !ids.empty()) {
        err << "give either ids or --all\n";
        return kUsageError;
    }
    std::optional<SqlFragment> set;
    if (!set_text.empty()) {
        std::string error;
        set = parse_fragment(set_text, error);
        if (set && !set->placeholders.empty())
            error = "must not contain placeholders, found ':" + set->placeholders[0] + "'";
        if (!set || !set->placeholders.empty()) {
            err << "--set: " << error << "\n";
            return kUsageError;
        }
    }
    try {
        const Revived revived = revive_dead_rows(source->config, *queue, ids, set);
        if (!revived.committed()) {
            err << "queue " << queue->label() << ": "
                << explain_not_due(*queue, revived, set.has_value());
            return 1;
        }
        out << "queue " << queue->label() << ": " << revived.rows << " dead row(s) are due again\n";
        if (!all && revived.rows < static_cast<std::int64_t>(ids.size())) {
            err << "queue " << queue->label() << ": "
                << static_cast<std::int64_t>(ids.size()) - revived.rows
                << " of the given ids are not dead rows\n";
            return 1;
        }
    } catch (const sql::SQLException& e) {
        err << "mysql: " << describe(e) << "\n";
        return 1;
    }
    return 0;
}

}  // namespace rowpump
