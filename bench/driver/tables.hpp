#pragma once

// The benchmark tables, created fresh (DROP + CREATE + INSERT ... FROM seq_1_to_N) for every
// measurement. rowpump's bookkeeping columns are part of CREATE TABLE, with the definitions
// `rowpump migrate` would add, so a measurement never includes an ALTER TABLE.

#include <cstdint>
#include <string>
#include <vector>

#include "rowpump/testing/mysql_client.hpp"

namespace rowpump::bench {

// Which of rowpump's indexes the tables get: {"lease"} (rp_lease_idx) is what `rowpump
// migrate` adds. Dispatchers older than 35a2ebd need {"token"} (rp_token_idx), those from
// 35a2ebd to b2cebae {"token", "lease"}; the A/B script compares against them.
using BookkeepingIndexes = std::vector<std::string>;

// user_block_status(user_id PK, status, updated_time DATETIME(3), KEY(updated_time)): the
// source problem. Every row is due (updated_time more than an hour ago), and updated_time is
// distinct per row (1 ms apart: DATETIME(3) cannot hold finer steps), because the claim
// sweeps forward by it and ties would make claims scan rows again.
void create_dispatch_table(testing::MysqlClient& db, std::int64_t rows,
                           const BookkeepingIndexes& indexes);

// tasks(user_id PK, status, updated_time, KEY(status, updated_time)): the one-shot shape
// (due "status = 0"), used by the end-to-end benchmark and the per-worker claim baseline.
// With `payload_columns`, also kPayloadColumns, about 100 bytes of a row's data on the wire
// when a queue sends them all.
void create_task_table(testing::MysqlClient& db, std::int64_t rows,
                       const BookkeepingIndexes& indexes, bool payload_columns = false);
// url VARCHAR(80) ascii, owner_id BIGINT, note VARCHAR(60) utf8mb4.
inline const char* const kPayloadColumns = "url, owner_id, note";

// timed_tasks(id PK, status, due_at DATETIME(6), started_at DATETIME(6), KEY(status, due_at)),
// empty.
void create_timed_table(testing::MysqlClient& db, const BookkeepingIndexes& indexes);
// Inserts `rows` rows into timed_tasks that become due at `rate` rows/s, the first one
// `lead_ms` after the insert, by the DB clock.
void schedule_timed_rows(testing::MysqlClient& db, std::int64_t rows, double rate, int lead_ms);

// fair_tasks(id PK, tenant_id, status, due_at DATETIME(6), started_at DATETIME(6),
// KEY by_due (status, due_at), KEY by_tenant (tenant_id, due_at)): `noisy` rows of key 0
// (ids 1..noisy) first in due_at order, then `quiet_keys` x `quiet_rows` rows of keys
// 1..quiet_keys taking turns; due_at from NOW(6) at the load on, 1 us apart.
void create_fair_table(testing::MysqlClient& db, std::int64_t noisy, int quiet_keys, int quiet_rows,
                       const BookkeepingIndexes& indexes);

}  // namespace rowpump::bench
