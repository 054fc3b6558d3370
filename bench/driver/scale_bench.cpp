// How cost grows: dispatch and end to end on tables of different sizes, in one run.

#include "driver/benchmarks.hpp"

namespace rowpump::bench {

void run_scale(Context& ctx, const ScaleSpec& spec, int rep) {
    // The size goes into the configuration label, so each size is a group of its own.
    const auto note = [](std::int64_t rows) { return ",rows=" + std::to_string(rows); };
    for (const auto rows : spec.rows) {
        run_dispatcher(ctx, rows, spec.batch, spec.time_limit_s, rep, "_scale", note(rows));
    }
    for (const auto rows : spec.rows) {
        EndToEndSpec e2e = spec.e2e;
        e2e.rows = rows;
        e2e.time_limit_s = spec.time_limit_s;
        e2e.bench = "e2e_scale";
        e2e.note = note(rows);
        run_end_to_end(ctx, e2e, rep);
    }
}

}  // namespace rowpump::bench
