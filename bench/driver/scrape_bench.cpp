// Scrapes beside dispatch: the dispatch rate while /metrics and /api/state are scraped 50
// times a second, against the rate without, in alternating phases of one run.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iomanip>
#include <sstream>
#include <thread>
#include <vector>

#include "driver/benchmarks.hpp"
#include "driver/tables.hpp"
#include "rowpump/testing/http_client.hpp"
#include "rowpump/testing/servers.hpp"

namespace rowpump::bench {

namespace {

using Clock = std::chrono::steady_clock;

const char* const kStats = "rowpump:{user_block_check}:stats";
constexpr std::chrono::milliseconds kScrapeEvery{20};  // 50 scrapes a second
constexpr std::chrono::milliseconds kGrace{10000};

QueueSpec scrape_queue(const ScrapeSpec& spec) {
    QueueSpec q = bench_queue();
    q.name = "user_block_check";
    q.table = "user_block_status";
    q.id = "user_id";
    q.due = "updated_time < NOW(3) - INTERVAL 10 SECOND";
    q.order_by = "updated_time";
    q.batch = spec.batch;  // many cycles a second: a loop that waited for scrapes would show
    q.max_backlog = std::max<std::int64_t>(spec.rows, 2000000);  // never the limit
    return q;
}

// Scrapes /metrics and /api/state in turn every 20 ms while `scraping` is set.
class Scraper {
public:
    explicit Scraper(int port)
        : thread_([this, port] {
              auto next = Clock::now();
              while (!stop_) {
                  next += kScrapeEvery;
                  if (scraping_) {
                      const auto r = testing::http_get(port, done_ % 2 ? "/api/state" : "/metrics");
                      (r.status == 200 ? done_ : failed_)++;
                  }
                  std::this_thread::sleep_until(next);
              }
          }) {}
    ~Scraper() {
        stop_ = true;
        thread_.join();
    }
    void set_scraping(bool on) { scraping_ = on; }
    int done() const { return done_; }
    int failed() const { return failed_; }

private:
    std::atomic<bool> scraping_{false}, stop_{false};
    std::atomic<int> done_{0}, failed_{0};
    std::thread thread_;
};

struct Phase {
    double rows_per_s = 0;
    bool complete = true;  // false: the scrapes did not come within the phase's limit
};

Phase measure_quiet(Context& ctx, std::chrono::milliseconds length) {
    const auto before = ctx.hash_int(kStats, "dispatched");
    const double start = now_seconds();
    std::this_thread::sleep_for(length);  // a measuring window, not a wait for an event
    const double seconds = now_seconds() - start;
    return {static_cast<double>(ctx.hash_int(kStats, "dispatched") - before) / seconds};
}

// The window is set by the scrapes done, so a slow machine lengthens it.
Phase measure_scraped(Context& ctx, Scraper& scraper, int scrapes) {
    const int target = scraper.done() + scrapes;
    const auto before = ctx.hash_int(kStats, "dispatched");
    const double start = now_seconds();
    scraper.set_scraping(true);
    bool complete = true;
    while (scraper.done() < target) {
        if (now_seconds() - start > 30) {
            complete = false;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    scraper.set_scraping(false);
    const double seconds = now_seconds() - start;
    return {static_cast<double>(ctx.hash_int(kStats, "dispatched") - before) / seconds, complete};
}

}  // namespace

Sample run_scrape(Context& ctx, const ScrapeSpec& spec, int rep) {
    const double load_start = now_seconds();
    create_dispatch_table(ctx.db(), spec.rows, ctx.indexes());
    log_load(spec.rows, now_seconds() - load_start);
    ctx.reset_and_settle();
    const int port = testing::free_port();
    const std::string config = "batch=" + std::to_string(spec.batch) + ",scrapes_per_s=50";
    const auto file =
        ctx.write_config(scrape_queue(spec), "scrape-" + config + ".yaml",
                         {"http:", "  listen: \"127.0.0.1:" + std::to_string(port) + "\""});
    testing::ChildProcess child(
        {ctx.programs().rowpump, "run", "-c", file, "--log-level", "warn"},
        testing::log_to(ctx.path("logs/scrape-" + config + "-rep" + std::to_string(rep) + ".log")));
    const double started = now_seconds();
    while (ctx.hash_int(kStats, "dispatched") == 0 ||
           testing::http_get(port, "/readyz").status != 200) {
        if (!child.running() || now_seconds() - started > 30) {
            throw std::runtime_error("rowpump run did not start dispatching; see its log");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }

    // Quiet, scraped, quiet, scraped: drift (the table emptying) hits both alike. Each pair
    // gives a ratio; the median is what a burst of other work cannot move alone.
    Scraper scraper(port);
    std::vector<double> ratios;
    double quiet = 0, scraped = 0;
    bool complete = true;
    for (int i = 0; i < spec.pairs; ++i) {
        const Phase q = measure_quiet(ctx, std::chrono::milliseconds(600));
        const Phase s = measure_scraped(ctx, scraper, 30);  // about 600 ms
        ratios.push_back(q.rows_per_s > 0 ? s.rows_per_s / q.rows_per_s : 0);
        quiet += q.rows_per_s;
        scraped += s.rows_per_s;
        complete = complete && s.complete;
    }
    const auto left = spec.rows - ctx.hash_int(kStats, "dispatched");
    child.stop(kGrace);
    std::sort(ratios.begin(), ratios.end());

    Sample sample{"scrape", config, rep, {}};
    sample.values["quiet_rows_per_s"] = quiet / spec.pairs;
    sample.values["scraped_rows_per_s"] = scraped / spec.pairs;
    sample.values["ratio_median"] = ratios[ratios.size() / 2];
    sample.values["scrapes"] = scraper.done();
    sample.values["scrape_failures"] = scraper.failed();
    // 0: the table ran dry before the last phase, which then measured an idle dispatcher.
    sample.values["rows_left"] = static_cast<double>(left);
    sample.values["complete"] = complete ? 1 : 0;
    std::ostringstream line;
    line << std::fixed << std::setprecision(0) << "scrape " << config << " rep " << rep
         << ": rows/s quiet " << sample.values["quiet_rows_per_s"] << ", scraped "
         << sample.values["scraped_rows_per_s"] << ", median ratio " << std::setprecision(2)
         << sample.values["ratio_median"] << "; " << scraper.failed() << " failed scrapes, " << left
         << " rows left" << (complete ? "" : " (a scraped phase hit its limit)");
    progress(line.str());
    ctx.record(sample);
    return sample;
}

}  // namespace rowpump::bench
