#include "rowpump/dispatcher/queue_store.hpp"

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "rowpump/dispatcher/mysql_session.hpp"
#include "rowpump/dispatcher/pacing.hpp"

namespace rowpump {

namespace {

// Rows per outcome statement; keeps the parameter count far below MySQL's limit. Outcome
// statements are prepared once per kind and size, for sizes that are powers of two up to this.
constexpr std::size_t kRowsPerStatement = 512;
constexpr std::size_t kMaxErrorBytes = 1000;

std::string micros(Millis d) { return std::to_string(d.count() * 1000); }

// Fits the error column; never cuts a UTF-8 sequence in half.
std::string clip_error(const std::string& text) {
    if (text.size() <= kMaxErrorBytes) return text;
    std::size_t cut = kMaxErrorBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return text.substr(0, cut) + "...";
}

std::string join(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "none" : out;
}

}  // namespace

AppliedCounts& AppliedCounts::operator+=(const AppliedCounts& o) {
    completed += o.completed;
    retried += o.retried;
    dead += o.dead;
    extended += o.extended;
    stale += o.stale;
    return *this;
}

std::string check_values(const protocol::Done& done, const std::vector<std::string>& declared) {
    for (const auto& [name, value] : done.values) {
        if (std::find(declared.begin(), declared.end(), name) == declared.end()) {
            return "undeclared value '" + name + "' (queue declares: " + join(declared) + ")";
        }
    }
    if (done.verb != protocol::Verb::ok) return "";
    for (const auto& name : declared) {
        auto has = [&](const auto& kv) { return kv.first == name; };
        if (std::none_of(done.values.begin(), done.values.end(), has)) {
            return "missing value '" + name + "' (on_success uses :" + name + ")";
        }
    }
    return "";
}

QueueStore::QueueStore(const Config& config, const QueueConfig& queue)
    : config_(config), queue_(queue), sql_(queue), random_(std::random_device{}()) {}

QueueStore::~QueueStore() = default;

std::unique_ptr<QueueStore> QueueStore::open(const Config& config, const QueueConfig& queue) {
    std::unique_ptr<QueueStore> store(new QueueStore(config, queue));
    store->conn_ = connect_mysql(config.mysql);
    store->claim_plan_.reset(store->conn_->prepareStatement(store->sql_.claim_plan()));
    store->claim_.reset(store->conn_->prepareStatement(store->sql_.claim()));
    store->claim_expired_.reset(store->conn_->prepareStatement(store->sql_.claim_expired()));
    if (!store->sql_.claim_from().empty()) {
        store->claim_from_.reset(store->conn_->prepareStatement(store->sql_.claim_from()));
    }
    store->read_back_.reset(store->conn_->prepareStatement(store->sql_.read_back()));
    store->release_.reset(store->conn_->prepareStatement(store->sql_.release()));
    return store;
}

bool QueueStore::try_lead() {
    std::unique_ptr<sql::PreparedStatement> lock(
        conn_->prepareStatement("SELECT GET_LOCK(CONCAT('rowpump:', SHA1(?)), 0)"));
    lock->setString(1, config_.mysql.database + "/" + queue_.name);
    std::unique_ptr<sql::ResultSet> rs(lock->executeQuery());
    return rs->next() && !rs->isNull(1) && rs->getInt(1) == 1;
}

std::int64_t QueueStore::stamp(sql::PreparedStatement& stmt, const std::string& prefix,
                              const std::string& lease_until, const std::optional<std::string>& cursor,
                              std::int64_t limit) {
    unsigned index = 1;
    stmt.setString(index++, prefix);
    stmt.setString(index++, lease_until);
    if (cursor) stmt.setString(index++, *cursor);
    stmt.setInt64(index, limit);
    std::int64_t changed = 0;
    retry_lock_conflicts([&] { changed = stmt.executeUpdate(); });
    return changed;
}

QueueStore::Plan QueueStore::plan() {
    claim_plan_->setString(1, micros(queue_.lease));
    std::unique_ptr<sql::ResultSet> rs(claim_plan_->executeQuery());
    if (!rs->next()) throw std::runtime_error("the claim plan query returned no row");
    return {rs->getString(1), rs->getInt(2) == 1};
}

Claim QueueStore::claim(std::int64_t limit) {
    // Both statements share a batch prefix and differ in its last hex digit, so one range
    // read-back finds both, and the digit tells swept rows from expired ones.
    char batch[24];
    std::snprintf(batch, sizeof batch, "%015llX", static_cast<unsigned long long>(random_() >> 4));
    const std::string expired_prefix = std::string(batch) + "0-", sweep_prefix = std::string(batch) + "1-";
    const Plan plan = this->plan();
    Claim claim{expired_prefix, std::string(batch) + "1.", plan.lease_until, {}};  // '.' sorts right after '-'

    const auto expired =
        plan.any_expired ? stamp(*claim_expired_, expired_prefix, claim.lease_until, std::nullopt, limit) : 0;
    std::int64_t swept = 0;
    if (expired < limit) {
        const bool resume = cursor_.has_value();
        swept = stamp(resume ? *claim_from_ : *claim_, sweep_prefix, claim.lease_until, cursor_, limit - expired);
        if (swept < limit - expired) cursor_.reset();  // the sweep reached the end: start over
    }
    if (expired + swept == 0) return claim;

    read_back_->setString(1, claim.lease_until);
    read_back_->setString(2, claim.low);
    read_back_->setString(3, claim.high);
    std::unique_ptr<sql::ResultSet> rs(read_back_->executeQuery());
    claim.rows.reserve(rs->rowsCount());
    std::optional<std::string> last_swept;
    while (rs->next()) {
        claim.rows.push_back({rs->getString(1), rs->getString(2)});
        if (claim_from_ && claim.rows.back().token.rfind(sweep_prefix, 0) == 0) {
            last_swept = rs->isNull(3) ? std::nullopt : std::optional<std::string>(rs->getString(3));
        }
    }
    if (claim_from_ && swept == limit - expired && swept > 0) cursor_ = std::move(last_swept);
    return claim;
}

std::int64_t QueueStore::release(const Claim& claim) {
    release_->setString(1, claim.lease_until);
    release_->setString(2, claim.low);
    release_->setString(3, claim.high);
    return release_->executeUpdate();
}

sql::PreparedStatement& QueueStore::outcome_statement(Outcome kind, std::size_t rows) {
    auto& stmt = outcome_statements_[{kind, rows}];
    if (!stmt) {
        switch (kind) {
            case Outcome::success: stmt.reset(conn_->prepareStatement(sql_.success(rows))); break;
            case Outcome::retry: stmt.reset(conn_->prepareStatement(sql_.retry(rows))); break;
            case Outcome::dead: stmt.reset(conn_->prepareStatement(sql_.dead(rows))); break;
            case Outcome::extend: stmt.reset(conn_->prepareStatement(sql_.extend(rows))); break;
        }
    }
    return *stmt;
}

std::int64_t QueueStore::update_joined(Outcome kind, const std::vector<std::vector<std::string>>& rows) {
    std::int64_t changed = 0;
    for (std::size_t start = 0; start < rows.size(); start += kRowsPerStatement) {
        const std::size_t n = std::min(kRowsPerStatement, rows.size() - start);
        std::size_t size = 1;
        while (size < n) size *= 2;
        auto& stmt = outcome_statement(kind, size);
        // The statement's extra rows repeat the chunk's last one: a multi-table UPDATE changes
        // a row once however many joined rows match it, and counts it once.
        unsigned index = 1;
        for (std::size_t i = 0; i < size; ++i) {
            for (const auto& value : rows[start + std::min(i, n - 1)]) stmt.setString(index++, value);
        }
        changed += stmt.executeUpdate();
    }
    return changed;
}

AppliedCounts QueueStore::apply(const std::vector<protocol::Done>& outcomes) {
    using protocol::Verb;
    std::vector<std::vector<std::string>> success, retry, dead, extend;
    std::uniform_real_distribution<double> jitter(0.0, 1.0);
    for (const auto& done : outcomes) {
        std::vector<std::string> row{done.task.token, done.task.id};
        const int attempt = done.task.attempt;  // the token fences: attempts = attempt - 1
        if (done.verb == Verb::ok) {
            for (const auto& name : sql_.placeholders()) {
                auto it = std::find_if(done.values.begin(), done.values.end(),
                                       [&](const auto& kv) { return kv.first == name; });
                row.push_back(it->second);
            }
            success.push_back(std::move(row));
        } else if (done.verb == Verb::extend) {
            row.push_back(micros(done.lease));
            extend.push_back(std::move(row));
        } else if (done.verb == Verb::fail || attempt >= queue_.retry.max_attempts) {
            row.push_back(std::to_string(attempt));
            row.push_back(clip_error(done.reason));
            dead.push_back(std::move(row));
        } else {
            Millis delay = done.delay ? *done.delay : retry_backoff(queue_.retry, attempt, jitter(random_));
            row.push_back(std::to_string(attempt));
            row.push_back(clip_error(done.reason));
            row.push_back(micros(delay));
            retry.push_back(std::move(row));
        }
    }

    std::unique_ptr<sql::Statement> tx(conn_->createStatement());
    AppliedCounts counts;
    retry_lock_conflicts([&] {
        tx->execute("START TRANSACTION");
        try {
            counts.extended = update_joined(Outcome::extend, extend);
            counts.completed = update_joined(Outcome::success, success);
            counts.retried = update_joined(Outcome::retry, retry);
            counts.dead = update_joined(Outcome::dead, dead);
            tx->execute("COMMIT");
        } catch (const sql::SQLException& e) {
            if (!is_connection_error(e)) tx->execute("ROLLBACK");
            throw;
        }
    });
    const auto applied = counts.completed + counts.retried + counts.dead;
    counts.stale = static_cast<std::int64_t>(success.size() + retry.size() + dead.size()) - applied;
    return counts;
}

}  // namespace rowpump

