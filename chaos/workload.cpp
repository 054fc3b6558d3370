#include "workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>

namespace rowpump::chaos {

using namespace std::chrono_literals;

Micros now_micros() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

Planned planned_outcome(const std::string& queue, const std::string& id, int attempt) {
    if (queue != "once") return Planned::ok;
    const std::int64_t n = std::stoll(id);
    if (n % 500 == 250) return Planned::fail;
    if (n % 20 == 7 && attempt == 1) return Planned::retry;
    return Planned::ok;
}

std::string planned_name(Planned planned) {
    switch (planned) {
        case Planned::retry:
            return "retry";
        case Planned::fail:
            return "fail";
        case Planned::ok:
            break;
    }
    return "ok";
}

bool fails_on_purpose(const std::string& queue, const std::string& id) {
    return queue == "once" && std::stoll(id) % 500 == 250;
}

std::string keyed_key(const std::string& id) {
    return std::to_string((std::stoll(id) - 1) % kKeyedKeys);
}

std::string uuid_of(std::int64_t n) {
    char text[40];
    const auto v = static_cast<unsigned long long>(n);
    std::snprintf(text, sizeof text, "c%07llx-%04llx-4%03llx-a%03llx-%012llx", v & 0xfffffff,
                  (v * 7919) & 0xffff, (v * 104729) & 0xfff, (v * 1299709) & 0xfff,
                  (v * 15485863) & 0xffffffffffffULL);
    return text;
}

WorkloadShape shape_for(std::int64_t tasks, int seconds) {
    WorkloadShape shape;
    shape.paced_rows = std::max<std::int64_t>(tasks / 100, 10);
    shape.uuid_rows = std::max<std::int64_t>(tasks / 20, 10);
    shape.periodic_rows = std::max<std::int64_t>(tasks / 5 / shape.rounds, 10);
    // 2% of the tasks, at most 4,800: the keyed queue is there for its limit, not for volume.
    shape.keyed_rows =
        std::clamp<std::int64_t>(tasks / 50, kKeyedBurst, 4800) / kKeyedBurst * kKeyedBurst;
    shape.once_rows =
        std::max<std::int64_t>(tasks - shape.paced_rows - shape.uuid_rows -
                                   shape.periodic_rows * shape.rounds - shape.keyed_rows,
                               10);
    // Dispatching the paced rows takes about 80% of the run: the limit binds throughout.
    shape.paced_per_second = static_cast<int>(
        std::max<double>(1, std::ceil(static_cast<double>(shape.paced_rows) / (seconds * 0.8))));
    // A key gets kKeyedBurst / kKeyedKeys (4) rows per burst, a burst every `between`: 3 per
    // half of that takes 6 per burst, 1.5 times what comes, and holds back the 4th of each.
    // At most 2 s: the last burst's 4th row waits that long after the last insert.
    const double between_ms =
        seconds * 1000.0 / static_cast<double>(shape.keyed_rows / kKeyedBurst);
    constexpr int kPerBurst = kKeyedBurst / kKeyedKeys;
    static_assert(kPerBurst > 3, "a burst must bring a key more rows than its rate_per_key");
    const auto half_ms = static_cast<std::int64_t>(between_ms / 2 / 10) * 10;  // whole 10 ms
    shape.keyed_rate_period =
        std::chrono::milliseconds(std::clamp<std::int64_t>(half_ms, 500, 2000));
    shape.keyed_rate_rows = std::max(
        3,
        static_cast<int>(std::ceil(
            1.5 * kPerBurst * static_cast<double>(shape.keyed_rate_period.count()) / between_ms)));
    return shape;
}

std::string keyed_rate_text(const WorkloadShape& shape) {
    return std::to_string(shape.keyed_rate_rows) + "/" +
           std::to_string(shape.keyed_rate_period.count()) + "ms";
}

std::vector<QueueInfo> queue_infos(const WorkloadShape& shape) {
    return {{"once", "chaos_once", 1},
            {"periodic", "chaos_periodic", shape.rounds},
            {"paced", "chaos_paced", 1},
            {"uuid", "chaos_uuid", 1},
            {kKeyedQueue, "chaos_keyed", 1}};
}

void create_tables(testing::MysqlClient& db) {
    for (const char* table : {"chaos_once", "chaos_paced"}) {
        db.exec(std::string("CREATE TABLE ") + table +
                " (id BIGINT PRIMARY KEY, done TINYINT NOT NULL DEFAULT 0, n INT NOT NULL "
                "DEFAULT 0, touched INT NOT NULL DEFAULT 0, claims VARCHAR(2000) NOT NULL DEFAULT "
                "'', KEY (done)) ENGINE=InnoDB");
    }
    db.exec(
        "CREATE TABLE chaos_uuid (id CHAR(36) CHARACTER SET ascii PRIMARY KEY, done TINYINT NOT "
        "NULL "
        "DEFAULT 0, n INT NOT NULL DEFAULT 0, claims VARCHAR(2000) NOT NULL DEFAULT '', KEY "
        "(done)) ENGINE=InnoDB");
    // group_by needs an index that starts with the key column (docs/fairness.md).
    db.exec(
        "CREATE TABLE chaos_keyed (id BIGINT PRIMARY KEY, tenant INT NOT NULL, done TINYINT NOT "
        "NULL DEFAULT 0, n INT NOT NULL DEFAULT 0, claims VARCHAR(2000) NOT NULL DEFAULT '', KEY "
        "tenant_id (tenant, id), KEY (done)) ENGINE=InnoDB");
    db.exec(
        "CREATE TABLE chaos_periodic (id BIGINT PRIMARY KEY, rounds_left INT NOT NULL, next_at "
        "DATETIME(3) NULL, n INT NOT NULL DEFAULT 0, claims VARCHAR(2000) NOT NULL DEFAULT '', "
        "KEY (next_at), KEY (rounds_left)) ENGINE=InnoDB");
}

namespace {

testing::QueueSpec base_spec(const std::string& name, const WorkloadShape& shape) {
    testing::QueueSpec q;
    q.name = name;
    q.table = "chaos_" + name;
    q.id = "id";
    q.lease = std::to_string(shape.lease.count()) + "s";
    q.claim = shape.claim;
    q.poll_min = "10ms";
    q.poll_max = "100ms";
    // A task taken back counts as a failed attempt: many faults must not make a row dead.
    q.extra_lines = {"reap_interval: 200ms", "retry: { base: 100ms, cap: 2s, max_attempts: 1000 }"};
    return q;
}

}  // namespace

std::vector<testing::QueueSpec> queue_specs(const WorkloadShape& shape) {
    const std::string count_claim = "n = n + 1, claims = CONCAT(claims, :claim, ' ')";
    testing::QueueSpec once = base_spec("once", shape);
    once.due = "done = 0";
    once.order_by = "id";
    once.batch = 500;
    once.max_backlog = 5000;
    once.on_success = "done = 1, " + count_claim;

    // next_at is computed before rounds_left changes (it is listed first, and reads the old
    // value either way); a finished row gets NULL, which the index on next_at leaves out.
    testing::QueueSpec periodic = base_spec("periodic", shape);
    // UTC_TIMESTAMP, not NOW: the workload's own SQL must not move with the db_time_zone fault.
    periodic.due = "rounds_left > 0 AND next_at <= UTC_TIMESTAMP(3)";
    periodic.order_by = "next_at";
    periodic.batch = 500;
    periodic.max_backlog = 5000;
    periodic.on_success =
        "next_at = IF(rounds_left > 1, UTC_TIMESTAMP(3) + INTERVAL 1 SECOND, NULL), "
        "rounds_left = rounds_left - 1, " +
        count_claim;

    testing::QueueSpec paced = base_spec("paced", shape);
    paced.due = "done = 0";
    paced.order_by = "id";
    paced.batch = 50;
    paced.max_backlog = 100;
    paced.rate = std::to_string(shape.paced_per_second) + "/1s";
    paced.on_success = "done = 1, " + count_claim;
    testing::QueueSpec uuid = base_spec("uuid", shape);
    uuid.due = "done = 0";
    uuid.order_by = "id";
    uuid.batch = 100;
    uuid.max_backlog = 2000;
    uuid.rate = kUuidRate;
    uuid.on_success = "done = 1, " + count_claim;

    testing::QueueSpec keyed = base_spec(kKeyedQueue, shape);
    keyed.claim = "mysql";  // group_by does not work with claim: redis yet (docs/fairness.md)
    keyed.due = "done = 0";
    keyed.order_by = "id";
    keyed.batch = 50;
    keyed.max_backlog = 100;
    keyed.on_success = "done = 1, " + count_claim;
    keyed.extra_lines.push_back("group_by: tenant");
    keyed.extra_lines.push_back("concurrency_per_key: " + std::to_string(kKeyedConcurrency));
    keyed.extra_lines.push_back("rate_per_key: " + keyed_rate_text(shape));
    return {once, periodic, paced, uuid, keyed};
}

namespace {

constexpr std::int64_t kRowsPerInsert = 1000;

// `columns` are the id and those that `values` fill, in order; `id_of` gives the id's SQL.
void insert_rows(testing::MysqlClient& db, const std::string& table, const std::string& columns,
                 const std::string& values, std::int64_t first, std::int64_t end,
                 std::string (*id_of)(std::int64_t) = nullptr) {
    std::string sql = "INSERT IGNORE INTO " + table + " (" + columns + ") VALUES ";
    for (std::int64_t id = first; id < end; ++id) {
        const std::string key = id_of == nullptr ? std::to_string(id) : "'" + id_of(id) + "'";
        sql += (id == first ? "(" : ",(") + key + values + ")";
    }
    db.exec(sql);
}

}  // namespace

Feeder::Feeder(testing::MysqlLogin login, WorkloadShape shape, std::chrono::milliseconds duration)
    : login_(std::move(login)), shape_(shape), duration_(duration), thread_([this] { run(); }) {}

Feeder::~Feeder() {
    stop();
}

void Feeder::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

std::vector<std::pair<Micros, std::int64_t>> Feeder::once_timeline() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return timeline_;
}

std::string Feeder::last_error() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_error_;
}

void Feeder::insert_until(testing::MysqlClient& db, double fraction) {
    const auto target = [&](std::int64_t total) {
        return std::min(
            total, static_cast<std::int64_t>(std::ceil(fraction * static_cast<double>(total))));
    };
    for (std::int64_t goal = target(shape_.once_rows); once_done_ < goal;) {
        const std::int64_t end = std::min(goal, once_done_ + kRowsPerInsert);
        insert_rows(db, "chaos_once", "id", "", once_done_ + 1, end + 1);
        once_done_ = end;
        std::lock_guard<std::mutex> lock(mutex_);
        timeline_.emplace_back(now_micros(), end);
    }
    for (std::int64_t goal = target(shape_.periodic_rows); periodic_done_ < goal;) {
        const std::int64_t end = std::min(goal, periodic_done_ + kRowsPerInsert);
        insert_rows(db, "chaos_periodic", "id, rounds_left, next_at",
                    ", " + std::to_string(shape_.rounds) + ", UTC_TIMESTAMP(3)", periodic_done_ + 1,
                    end + 1);
        periodic_done_ = end;
    }
    for (std::int64_t goal = target(shape_.uuid_rows); uuid_done_ < goal;) {
        const std::int64_t end = std::min(goal, uuid_done_ + kRowsPerInsert);
        insert_rows(db, "chaos_uuid", "id", "", uuid_done_ + 1, end + 1, uuid_of);
        uuid_done_ = end;
    }
    // Whole bursts only: each key gets twice its limit at once.
    for (std::int64_t goal = target(shape_.keyed_rows) / kKeyedBurst * kKeyedBurst;
         keyed_done_ < goal; keyed_done_ += kKeyedBurst) {
        std::string sql = "INSERT IGNORE INTO chaos_keyed (id, tenant) VALUES ";
        for (std::int64_t id = keyed_done_ + 1; id <= keyed_done_ + kKeyedBurst; ++id) {
            sql += (id == keyed_done_ + 1 ? "(" : ",(") + std::to_string(id) + ", " +
                   keyed_key(std::to_string(id)) + ")";
        }
        db.exec(sql);
    }
}

void Feeder::run() {
    const auto start = std::chrono::steady_clock::now();
    bool paced_done = false;
    while (!stop_ && !finished_) {
        try {
            testing::MysqlClient db = testing::MysqlClient::connect(login_);
            if (!paced_done) {
                for (std::int64_t first = 1; first <= shape_.paced_rows; first += kRowsPerInsert) {
                    insert_rows(db, "chaos_paced", "id", "", first,
                                std::min(shape_.paced_rows + 1, first + kRowsPerInsert));
                }
                paced_done = true;
            }
            while (!stop_ && !finished_) {
                const double fraction = std::min(
                    1.0, std::chrono::duration<double>(std::chrono::steady_clock::now() - start) /
                             duration_);
                insert_until(db, fraction);
                finished_ = fraction >= 1.0;
                std::this_thread::sleep_for(50ms);
            }
        } catch (const std::exception& e) {
            // MySQL is down or restarting (the schedule does that): wait and reconnect.
            std::lock_guard<std::mutex> lock(mutex_);
            last_error_ = e.what();
        }
        if (!finished_) std::this_thread::sleep_for(200ms);
    }
}

}  // namespace rowpump::chaos
