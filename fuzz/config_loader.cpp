// The config loader: YAML text in, a ConfigError naming the file or a config out. Never a
// crash, never another exception; and every statement built from a config that loads keeps
// the operator's SQL inside the parentheses it was placed in.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "fuzz_check.hpp"
#include "rowpump/dispatcher/config/config.hpp"
#include "rowpump/dispatcher/sql/queue_sql.hpp"

using namespace rowpump;

namespace {

// A fragment that is accepted stays one expression: wrapped in parentheses and followed by
// one more ')', it is that last ')' (and nothing before it) which closes no '('.
void check_contained(const SqlFragment& fragment) {
    std::string error;
    const std::string wrapped = "(" + fragment.text + "))";
    FUZZ_CHECK(!parse_fragment(wrapped, error));
    FUZZ_CHECK(error.find("at column " + std::to_string(wrapped.size())) != std::string::npos);
}

void check_queue(const QueueConfig& queue) {
    FUZZ_CHECK(queue.lease > Millis(0) && queue.lease <= kMaxDuration);
    FUZZ_CHECK(queue.retry.max_delay <= kMaxDuration);
    check_contained(queue.due);
    if (queue.on_success) check_contained(*queue.on_success);
    if (queue.on_dead) check_contained(*queue.on_dead);
    const QueueSql sql(queue);
    (void)sql.success(2);
    (void)sql.dead(1);
    for (const auto& dialect : {Dialect::mariadb(), Dialect::from_version("8.0.36")}) {
        (void)dialect.add_columns(queue.table, sql.bookkeeping_columns());
        (void)sql.add_lease_index(dialect);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const Config config = parse_config(text, "fuzz.yaml");
        FUZZ_CHECK(!config.queues.empty());
        for (const auto& queue : config.queues) check_queue(queue);
    } catch (const ConfigError& e) {
        FUZZ_CHECK(std::string(e.what()).rfind("fuzz.yaml:", 0) == 0);
        FUZZ_CHECK(e.line() >= 1);
    }
    return 0;
}
