#include "driver/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "driver/benchmarks.hpp"

namespace rowpump::bench {

namespace {

// Samples of one benchmark and configuration, in the order they ran.
using Group = std::vector<const Sample*>;

std::map<std::string, Group> by_config(const std::vector<Sample>& samples,
                                       const std::string& bench) {
    std::map<std::string, Group> groups;
    for (const auto& s : samples) {
        if (s.bench == bench) groups[s.config].push_back(&s);
    }
    return groups;
}

std::vector<double> values(const Group& g, const std::string& name) {
    std::vector<double> out;
    for (const auto* s : g) {
        auto it = s->values.find(name);
        if (it != s->values.end()) out.push_back(it->second);
    }
    return out;
}

double median(std::vector<double> v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double median_of(const Group& g, const std::string& name) {
    return median(values(g, name));
}

// 81234.5 -> "81,235"
std::string thousands(double x) {
    if (std::isnan(x)) return "-";
    auto n = static_cast<long long>(std::llround(x));
    std::string digits = std::to_string(std::llabs(n)), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return (n < 0 ? "-" : "") + out;
}

std::string fixed(double x, int decimals) {
    if (std::isnan(x)) return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.*f", decimals, x);
    return text;
}

std::string runs(const Group& g, const std::string& name) {
    std::string out;
    for (double v : values(g, name)) out += (out.empty() ? "" : " / ") + thousands(v);
    return out;
}

int finished_count(const Group& g) {
    int n = 0;
    for (double v : values(g, "finished")) n += v > 0 ? 1 : 0;
    return n;
}

int batch_of(const std::string& config) {
    return std::stoi(config.substr(config.find('=') + 1));
}

std::string yes_no(bool ok) {
    return ok ? "**yes**" : "**no**";
}

// Rows moved by each mark, median of runs: shows whether a rate holds during a run.
std::string progress_table(const std::vector<Sample>& samples, const std::string& config) {
    const std::pair<const char*, const char*> rows[] = {
        {"dispatch", "rowpump run"},
        {"bare", "bare loop"},
        {"bare_restart", "bare loop + 1 s restart"}};
    std::ostringstream md;
    md << "Rows in the ready list after N seconds, " << config << " (median of runs):\n\n| |";
    for (int m : kProgressMarks) md << " " << m << " s |";
    md << "\n|---|";
    for (std::size_t i = 0; i < std::size(kProgressMarks); ++i) md << "---:|";
    md << "\n";
    for (const auto& [bench, name] : rows) {
        const auto groups = by_config(samples, bench);
        if (!groups.count(config)) continue;
        md << "| " << name << " |";
        for (int m : kProgressMarks) {
            md << " " << thousands(median_of(groups.at(config), progress_key(m))) << " |";
        }
        md << "\n";
    }
    return md.str() + "\n";
}

// One size of the scale phase: its table rows and its runs.
struct SizeGroup {
    double rows = 0;
    const Group* group = nullptr;
};

// Points into `groups`, which must outlive the result.
std::vector<SizeGroup> by_size(const std::map<std::string, Group>& groups) {
    std::vector<SizeGroup> sizes;
    for (const auto& [c, g] : groups) sizes.push_back({median_of(g, "table_rows"), &g});
    std::sort(sizes.begin(), sizes.end(),
              [](const auto& a, const auto& b) { return a.rows < b.rows; });
    return sizes;
}

// What the scale phase found for one benchmark: rate and RSS, largest size / smallest.
struct Growth {
    double rate = NAN;
    double rss = NAN;
};

// One table per benchmark of the scale phase; every size against the smallest.
Growth scale_table(std::ostringstream& md, const std::vector<Sample>& samples,
                   const std::string& bench, const std::string& title, const std::string& rate,
                   const std::string& rss, const std::string& work) {
    const auto groups = by_config(samples, bench);
    const auto sizes = by_size(groups);
    if (sizes.empty()) return {};
    md << "### " << title << " (median of runs)\n\n"
       << "| table rows | rows/s | runs | of the smallest | finished | dispatcher peak RSS MB "
          "(runs) | MariaDB CPU s per million rows |\n"
       << "|---:|---:|---|---:|---:|---:|---:|\n";
    const Group& first = *sizes.front().group;
    for (const auto& size : sizes) {
        const Group& g = *size.group;
        std::string rss_runs;
        for (double v : values(g, rss)) rss_runs += (rss_runs.empty() ? "" : " / ") + fixed(v, 1);
        md << "| " << thousands(size.rows) << " | " << thousands(median_of(g, rate)) << " | "
           << runs(g, rate) << " | " << fixed(100 * median_of(g, rate) / median_of(first, rate), 0)
           << "% | " << finished_count(g) << "/" << g.size() << " | " << fixed(median_of(g, rss), 1)
           << " (" << rss_runs << ") | "
           << fixed(1e6 * median_of(g, "mysql_cpu_s") / median_of(g, work), 1) << " |\n";
    }
    md << "\n";
    const Group& last = *sizes.back().group;
    return {median_of(last, rate) / median_of(first, rate),
            median_of(last, rss) / median_of(first, rss)};
}

std::string scale_targets(const Growth& growth, const std::string& what, const Targets& t) {
    if (std::isnan(growth.rate)) return "";
    return "| " + what + ": rows/s on the largest table >= " + fixed(100 * t.scale_rate, 0) +
           "% of the smallest | " + fixed(100 * growth.rate, 0) + "% | " +
           yes_no(growth.rate >= t.scale_rate) + " |\n| " + what +
           ": dispatcher peak RSS on the largest table <= " + fixed(100 * t.scale_rss, 0) +
           "% of the smallest | " + fixed(100 * growth.rss, 0) + "% | " +
           yes_no(growth.rss <= t.scale_rss) + " |\n";
}

}  // namespace

std::string markdown_summary(const std::vector<Sample>& samples, const Targets& targets) {
    std::ostringstream md;
    const auto dispatch = by_config(samples, "dispatch");
    const auto bare = by_config(samples, "bare");
    const auto bare_restart = by_config(samples, "bare_restart");
    double ratio_at_1000 = NAN;

    if (!dispatch.empty() || !bare.empty()) {
        std::vector<std::string> configs;
        for (const auto& [c, g] : dispatch) configs.push_back(c);
        for (const auto& [c, g] : bare) {
            if (!dispatch.count(c)) configs.push_back(c);
        }
        std::sort(configs.begin(), configs.end(),
                  [](const auto& a, const auto& b) { return batch_of(a) < batch_of(b); });
        md << "### A/B. Dispatch throughput, MySQL -> Redis ready list (median of runs)\n\n"
           << "| batch | rowpump run rows/s | bare loop rows/s | rowpump / bare | rowpump finished "
              "| rowpump CPU s (% of wall) | rowpump peak RSS MB | bare loop CPU s (%) "
              "| MariaDB CPU s, rowpump / bare |\n"
           << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
        for (const auto& c : configs) {
            static const Group none;
            const Group& d = dispatch.count(c) ? dispatch.at(c) : none;
            const Group& b = bare.count(c) ? bare.at(c) : none;
            const double ratio = median_of(d, "rows_per_s") / median_of(b, "rows_per_s");
            if (batch_of(c) == 1000) ratio_at_1000 = ratio;
            md << "| " << batch_of(c) << " | " << thousands(median_of(d, "rows_per_s")) << " ("
               << runs(d, "rows_per_s") << ") | " << thousands(median_of(b, "rows_per_s")) << " ("
               << runs(b, "rows_per_s") << ") | " << fixed(100 * ratio, 0) << "% | "
               << finished_count(d) << "/" << d.size() << " | " << fixed(median_of(d, "cpu_s"), 1)
               << " (" << fixed(median_of(d, "cpu_pct"), 0) << "%) | "
               << fixed(median_of(d, "max_rss_mb"), 0) << " | " << fixed(median_of(b, "cpu_s"), 1)
               << " (" << fixed(median_of(b, "cpu_pct"), 0) << "%) | "
               << fixed(median_of(d, "mysql_cpu_s"), 1) << " / "
               << fixed(median_of(b, "mysql_cpu_s"), 1) << " |\n";
        }
        for (const auto& [c, g] : bare_restart) {
            md << "\nDiagnostic, bare loop that also restarts its sweep every second (as the "
                  "dispatcher did before 35a2ebd), "
               << c << ": " << thousands(median_of(g, "rows_per_s")) << " rows/s ("
               << runs(g, "rows_per_s") << "), finished " << finished_count(g) << "/" << g.size()
               << ".\n";
        }
        const auto dispatch_small = by_config(samples, "dispatch_small");
        const auto bare_small = by_config(samples, "bare_small");
        for (const auto& [c, g] : dispatch_small) {
            if (!bare_small.count(c)) continue;
            const Group& b = bare_small.at(c);
            md << "\nDiagnostic, a table of " << thousands(median_of(g, "rows_moved"))
               << " rows (a short run), " << c << ": rowpump "
               << thousands(median_of(g, "rows_per_s")) << " rows/s (" << runs(g, "rows_per_s")
               << "), bare loop " << thousands(median_of(b, "rows_per_s")) << " ("
               << runs(b, "rows_per_s")
               << "): " << fixed(100 * median_of(g, "rows_per_s") / median_of(b, "rows_per_s"), 0)
               << "%.\n";
        }
        md << "\nA run that hits the time limit counts the rows moved so far over the limit.\n\n";
        md << progress_table(samples, "batch=1000");
    }

    const auto e2e = by_config(samples, "e2e");
    double best_e2e = NAN;
    std::string best_config;
    if (!e2e.empty()) {
        md << "### C. End to end, no-op handler (median of runs)\n\n"
           << "| worker processes x threads | tasks/s | runs | finished | dispatcher CPU s "
              "| workers CPU s | MariaDB CPU s | Redis CPU s | wall s |\n"
           << "|---|---:|---|---:|---:|---:|---:|---:|---:|\n";
        for (const auto& [c, g] : e2e) {
            const double rate = median_of(g, "tasks_per_s");
            if (std::isnan(best_e2e) || rate > best_e2e) best_e2e = rate, best_config = c;
            md << "| " << c << " | " << thousands(rate) << " | " << runs(g, "tasks_per_s") << " | "
               << finished_count(g) << "/" << g.size() << " | "
               << fixed(median_of(g, "dispatcher_cpu_s"), 1) << " | "
               << fixed(median_of(g, "workers_cpu_s"), 1) << " | "
               << fixed(median_of(g, "mysql_cpu_s"), 1) << " | "
               << fixed(median_of(g, "redis_cpu_s"), 1) << " | "
               << fixed(median_of(g, "seconds"), 1) << " |\n";
        }
        md << "\n";
    }

    const auto drain = by_config(samples, "drain");
    if (!drain.empty()) {
        md << "### C. Workers alone: draining ready messages from Redis (median of runs)\n\n"
           << "| worker processes x threads | tasks/s | runs | workers CPU s | Redis CPU s |\n"
           << "|---|---:|---|---:|---:|\n";
        for (const auto& [c, g] : drain) {
            md << "| " << c << " | " << thousands(median_of(g, "tasks_per_s")) << " | "
               << runs(g, "tasks_per_s") << " | " << fixed(median_of(g, "workers_cpu_s"), 1)
               << " | " << fixed(median_of(g, "redis_cpu_s"), 1) << " |\n";
        }
        md << "\n";
    }

    const auto latency = by_config(samples, "latency");
    if (!latency.empty()) {
        md << "### C. Due-to-start latency, queue not backlogged (median of runs)\n\n"
           << "| config | p50 ms | p99 ms | max ms | rows counted per run | runs p50 | runs p99 |\n"
           << "|---|---:|---:|---:|---:|---|---|\n";
        for (const auto& [c, g] : latency) {
            std::string p50s, p99s;
            for (double v : values(g, "p50_ms")) p50s += (p50s.empty() ? "" : " / ") + fixed(v, 1);
            for (double v : values(g, "p99_ms")) p99s += (p99s.empty() ? "" : " / ") + fixed(v, 1);
            md << "| " << c << " | " << fixed(median_of(g, "p50_ms"), 1) << " | "
               << fixed(median_of(g, "p99_ms"), 1) << " | " << fixed(median_of(g, "max_ms"), 1)
               << " | " << thousands(median_of(g, "counted")) << " | " << p50s << " | " << p99s
               << " |\n";
        }
        md << "\n";
    }

    const auto baseline = by_config(samples, "baseline");
    double baseline_rate = NAN;
    if (!baseline.empty()) {
        md << "### D. Per-worker claims straight from MySQL (median of runs)\n\n"
           << "| config | tasks/s | runs | lock errors per run |\n|---|---:|---|---:|\n";
        for (const auto& [c, g] : baseline) {
            baseline_rate = median_of(g, "tasks_per_s");
            md << "| " << c << " | " << thousands(baseline_rate) << " | " << runs(g, "tasks_per_s")
               << " | " << thousands(median_of(g, "errors")) << " |\n";
        }
        md << "\n";
    }

    const auto scrape = by_config(samples, "scrape");
    if (!scrape.empty()) {
        md << "### Scrapes beside dispatch (median of runs)\n\n"
           << "| config | rows/s quiet | rows/s scraped | scraped / quiet (median of pairs) | "
              "runs | failed scrapes |\n|---|---:|---:|---:|---|---:|\n";
        for (const auto& [c, g] : scrape) {
            std::string ratios;
            for (double v : values(g, "ratio_median"))
                ratios += (ratios.empty() ? "" : " / ") + fixed(100 * v, 0) + "%";
            md << "| " << c << " | " << thousands(median_of(g, "quiet_rows_per_s")) << " | "
               << thousands(median_of(g, "scraped_rows_per_s")) << " | "
               << fixed(100 * median_of(g, "ratio_median"), 0) << "% | " << ratios << " | "
               << thousands(median_of(g, "scrape_failures")) << " |\n";
        }
        md << "\n";
    }

    const auto fair = by_config(samples, "fair");
    if (!fair.empty()) {
        md << "### Fair share across keys: a noisy key and quiet keys, end to end (median of "
              "runs)\n\n"
           << "| config | quiet keys' due->start p50 ms | p99 ms | max ms | quiet tasks started "
              "| noisy key's p50 ms | p99 ms | noisy tasks started before the last quiet one "
              "| tasks/s in the window | runs | tasks/s over the run | runs | finished |\n"
           << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|\n";
        for (const auto& [c, g] : fair) {
            md << "| " << c << " | " << thousands(median_of(g, "quiet_p50_ms")) << " | "
               << thousands(median_of(g, "quiet_p99_ms")) << " | "
               << thousands(median_of(g, "quiet_max_ms")) << " | "
               << thousands(median_of(g, "quiet_started")) << " | "
               << thousands(median_of(g, "noisy_p50_ms")) << " | "
               << thousands(median_of(g, "noisy_p99_ms")) << " | "
               << thousands(median_of(g, "noisy_before_last_quiet")) << " | "
               << thousands(median_of(g, "window_tasks_per_s")) << " | "
               << runs(g, "window_tasks_per_s") << " | " << thousands(median_of(g, "tasks_per_s"))
               << " | " << runs(g, "tasks_per_s") << " | " << finished_count(g) << "/" << g.size()
               << " |\n";
        }
        // The rate ratio per repetition: each pair ran back to back.
        if (fair.count("ordered") && fair.count("group_by")) {
            for (const std::string rate : {"window_tasks_per_s", "tasks_per_s"}) {
                std::vector<double> ratios;
                std::string pairs;
                for (const auto* grouped : fair.at("group_by")) {
                    for (const auto* ordered : fair.at("ordered")) {
                        if (ordered->rep != grouped->rep) continue;
                        const double r = grouped->values.at(rate) / ordered->values.at(rate);
                        ratios.push_back(r);
                        pairs += (pairs.empty() ? "" : " / ") + fixed(r, 2);
                    }
                }
                md << "\ngroup_by / ordered, "
                   << (rate == "tasks_per_s"
                           ? "tasks/s over the run"
                           : "tasks started in the window (the first " +
                                 fixed(median_of(fair.at("ordered"), "window_s"), 0) + " s)")
                   << ", per repetition: " << pairs << "; median **" << fixed(median(ratios), 2)
                   << "**.\n";
            }
        }
        md << "\n";
    }

    const Growth dispatch_growth =
        scale_table(md, samples, "dispatch_scale", "How cost grows: dispatch (`rowpump run` alone)",
                    "rows_per_s", "max_rss_mb", "rows_moved");
    const Growth e2e_growth = scale_table(md, samples, "e2e_scale", "How cost grows: end to end",
                                          "tasks_per_s", "dispatcher_rss_mb", "completed");

    std::ostringstream targets_md;
    targets_md << scale_targets(dispatch_growth, "dispatch", targets)
               << scale_targets(e2e_growth, "end to end", targets);
    if (!std::isnan(ratio_at_1000)) {
        targets_md << "| rowpump >= " << fixed(100 * targets.dispatch_ratio, 0)
                   << "% of the bare loop at batch 1000 | " << fixed(100 * ratio_at_1000, 0)
                   << "% | " << yes_no(ratio_at_1000 >= targets.dispatch_ratio) << " |\n";
    }
    if (!std::isnan(best_e2e)) {
        targets_md << "| end to end >= " << thousands(targets.e2e_tasks_per_s) << " tasks/s | "
                   << thousands(best_e2e) << " (" << best_config << ") | "
                   << yes_no(best_e2e >= targets.e2e_tasks_per_s) << " |\n";
    }
    if (!std::isnan(best_e2e) && !std::isnan(baseline_rate)) {
        const double x = best_e2e / baseline_rate;
        targets_md << "| end to end >= " << fixed(targets.e2e_over_baseline, 0)
                   << "x the per-worker baseline | " << fixed(x, 1) << "x | "
                   << yes_no(x >= targets.e2e_over_baseline) << " |\n";
    }
    if (!targets_md.str().empty()) {
        md << "### Targets\n\n| target | measured | met |\n|---|---:|---|\n" << targets_md.str();
    }
    return md.str();
}

}  // namespace rowpump::bench
