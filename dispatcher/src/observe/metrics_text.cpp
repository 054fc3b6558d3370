#include "rowpump/dispatcher/observe/metrics_text.hpp"

#include <cstdio>
#include <functional>
#include <optional>

namespace rowpump {

namespace {

class Writer {
public:
    void family(const char* name, const char* type, const char* help) {
        out_ += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    }
    void sample(const std::string& name, const std::string& labels, double value) {
        char number[64];
        std::snprintf(number, sizeof number, "%.17g", value);
        out_ += name + "{" + labels + "} " + number + "\n";
    }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

std::string queue_label(const QueueMetrics& q) {
    return "queue=\"" + q.queue() + "\"";
}

void counters(Writer& w, const MetricsSet& queues) {
    struct Family {
        Counter counter;
        const char* help;
    };
    const Family families[] = {
        {Counter::dispatched, "Ready messages pushed to Redis by this process."},
        {Counter::completed, "Successful outcomes applied (on_success ran)."},
        {Counter::retried, "Retry outcomes applied, including tasks taken back from workers."},
        {Counter::dead, "Rows that went dead (fail, or retries used up)."},
        {Counter::stale, "Outcomes ignored because their claim token no longer matched."},
        {Counter::bad, "Malformed or refused messages moved to the bad list."},
        {Counter::reaped, "Tasks taken back from workers whose heartbeat expired."},
        {Counter::claims, "Claims run against MySQL (one per cycle with room to dispatch)."},
        {Counter::renewed, "Leases renewed because their task was still held (claim: mysql)."},
        {Counter::again,
         "Outcomes found applied already and counted once (also in completed, retried, dead)."},
    };
    for (const auto& f : families) {
        const std::string name = std::string("rowpump_") + counter_name(f.counter) + "_total";
        w.family(name.c_str(), "counter", f.help);
        for (const auto& q : queues)
            w.sample(name, queue_label(*q), static_cast<double>(q->get(f.counter)));
    }
    w.family("rowpump_errors_total", "counter", "Errors met by the queue's loop, by kind.");
    for (const auto& q : queues) {
        for (auto k : {ErrorKind::mysql_connection, ErrorKind::mysql, ErrorKind::redis_connection,
                       ErrorKind::redis}) {
            w.sample("rowpump_errors_total",
                     queue_label(*q) + ",kind=\"" + error_kind_name(k) + "\"",
                     static_cast<double>(q->errors(k)));
        }
    }
}

void histogram(Writer& w, const MetricsSet& queues, const char* name, const char* help,
               const Histogram& (QueueMetrics::*which)() const) {
    w.family(name, "histogram", help);
    for (const auto& q : queues) {
        const auto s = ((*q).*which)().snapshot();
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < s.counts.size(); ++i) {
            cumulative += s.counts[i];
            char bound[32];
            if (i < s.bounds.size())
                std::snprintf(bound, sizeof bound, "%g", s.bounds[i]);
            else
                std::snprintf(bound, sizeof bound, "+Inf");
            w.sample(std::string(name) + "_bucket", queue_label(*q) + ",le=\"" + bound + "\"",
                     static_cast<double>(cumulative));
        }
        w.sample(std::string(name) + "_sum", queue_label(*q), s.sum_seconds);
        w.sample(std::string(name) + "_count", queue_label(*q), static_cast<double>(cumulative));
    }
}

// With group_by: the top keys the leader published and every other key together, at most
// protocol::kTopKeys + 1 label values per queue.
void key_figures(Writer& w, const MetricsSet& queues) {
    std::vector<std::optional<protocol::KeyGauges>> shown;
    for (const auto& q : queues) shown.push_back(q->keys().shown());
    const auto each =
        [&](const char* name, const char* type, const char* help,
            const std::function<std::optional<std::int64_t>(const protocol::KeyFigure&)>& value) {
            w.family(name, type, help);
            for (std::size_t i = 0; i < queues.size(); ++i) {
                if (!shown[i]) continue;
                const auto label = [&](const std::string& key) {
                    return queue_label(*queues[i]) + ",key=\"" + key + "\"";
                };
                for (const auto& f : shown[i]->top) {
                    if (const auto v = value(f))
                        w.sample(name, label(f.key ? label_value(*f.key) : kNullKeyLabel),
                                 static_cast<double>(*v));
                }
                if (const auto v = value(shown[i]->other))
                    w.sample(name, label(kOtherKeysLabel), static_cast<double>(*v));
            }
        };
    each("rowpump_key_pushed_total", "counter",
         "group_by: tasks pushed per key by the leader (top keys, the rest as key=\"(other)\").",
         [](const protocol::KeyFigure& f) { return std::optional(f.pushed); });
    each("rowpump_key_passed_over_total", "counter",
         "group_by: claims that passed the key over at its concurrency_per_key.",
         [](const protocol::KeyFigure& f) { return std::optional(f.passed_over); });
    each("rowpump_key_in_flight", "gauge",
         "group_by with concurrency_per_key: the key's tasks in flight at the last claim.",
         [](const protocol::KeyFigure& f) { return f.in_flight; });
}

void gauges(Writer& w, const MetricsSet& queues) {
    struct Family {
        const char* name;
        Gauge gauge;
        const char* help;
    };
    const Family families[] = {
        {"rowpump_due_backlog", Gauge::due,
         "Rows due and claimable, counted up to due_count.cap by the leader."},
        {"rowpump_due_backlog_capped", Gauge::due_capped,
         "1 when the due count stopped at due_count.cap (there are more)."},
        {"rowpump_ready_length", Gauge::ready, "Ready messages waiting for a worker."},
        {"rowpump_in_flight", Gauge::in_flight, "Tasks held by workers."},
        {"rowpump_workers", Gauge::workers, "Workers listed for the queue."},
        {"rowpump_live_workers", Gauge::live_workers,
         "Workers listed for the queue whose heartbeat is alive."},
        {"rowpump_leader", Gauge::leader,
         "1 while this process is the queue's leader (with shards: how many it leads)."},
        {"rowpump_paused", Gauge::paused, "1 while the queue is paused."},
    };
    for (const auto& f : families) {
        w.family(f.name, "gauge", f.help);
        for (const auto& q : queues)
            w.sample(f.name, queue_label(*q), static_cast<double>(q->get(f.gauge)));
    }
    w.family("rowpump_oldest_due_age_seconds", "gauge",
             "Age of the oldest due row (queues with due_since only).");
    for (const auto& q : queues) {
        const auto ms = q->get(Gauge::oldest_due_age_ms);
        if (ms >= 0)
            w.sample("rowpump_oldest_due_age_seconds", queue_label(*q),
                     static_cast<double>(ms) / 1000.0);
    }
    w.family("rowpump_connected", "gauge",
             "1 while the queue's loop (with shards: each shard's) is connected to the server.");
    for (const auto& q : queues) {
        w.sample("rowpump_connected", queue_label(*q) + ",server=\"mysql\"",
                 q->connected(Gauge::mysql_connected) ? 1.0 : 0.0);
        w.sample("rowpump_connected", queue_label(*q) + ",server=\"redis\"",
                 q->connected(Gauge::redis_connected) ? 1.0 : 0.0);
    }
}

}  // namespace

std::string render_metrics(const MetricsSet& queues, const std::string& version) {
    Writer w;
    w.family("rowpump_build_info", "gauge", "The rowpump version this dispatcher runs.");
    w.sample("rowpump_build_info", "version=\"" + version + "\"", 1);
    counters(w, queues);
    histogram(w, queues, "rowpump_claim_duration_seconds",
              "Time a claim took in MySQL (plan, UPDATEs and read-back).",
              &QueueMetrics::claim_duration);
    histogram(w, queues, "rowpump_outcome_batch_duration_seconds",
              "Time one batch of outcomes took to apply in MySQL.",
              &QueueMetrics::outcome_batch_duration);
    histogram(w, queues, "rowpump_due_to_start_seconds",
              "From when a row came due (due_since; without it, from its claim) to its push "
              "to the ready list.",
              &QueueMetrics::due_to_start);
    histogram(w, queues, "rowpump_handler_seconds",
              "How long handlers ran, as workers report it (ms= in done messages).",
              &QueueMetrics::handler_duration);
    gauges(w, queues);
    key_figures(w, queues);
    return w.take();
}

std::string label_value(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char c = byte(i);
        if (c == '\\' || c == '"') {
            out += '\\';
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        if (c == '\n') {
            out += "\\n";
            ++i;
            continue;
        }
        if (c < 0x80) {
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        // A well-formed UTF-8 sequence (no overlong forms, surrogates or values past U+10FFFF)
        // is kept; anything else is one U+FFFD per byte.
        std::size_t n = c >= 0xC2 && c <= 0xDF   ? 2
                        : c >= 0xE0 && c <= 0xEF ? 3
                        : c >= 0xF0 && c <= 0xF4 ? 4
                                                 : 0;
        bool ok = n > 0 && i + n <= text.size();
        for (std::size_t k = 1; ok && k < n; ++k) ok = (byte(i + k) & 0xC0) == 0x80;
        if (ok && n >= 3) {
            const unsigned char second = byte(i + 1);
            if (c == 0xE0) ok = second >= 0xA0;
            if (c == 0xED) ok = second < 0xA0;
            if (c == 0xF0) ok = second >= 0x90;
            if (c == 0xF4) ok = second < 0x90;
        }
        if (!ok) {
            out += "\xEF\xBF\xBD";
            ++i;
            continue;
        }
        out.append(text.substr(i, n));
        i += n;
    }
    return out;
}

}  // namespace rowpump
