-- The demo's task table, modelled on the "re-check every user every 10 s" case: one row per
-- user, due again 10 s after its last check. Every row starts due (last checked an hour ago).
-- @rows sets how many users (default 100000), e.g. mariadb --init-command='SET @rows=5000'.
-- seq_1_to_N comes from MariaDB's built-in Sequence engine.

CREATE TABLE IF NOT EXISTS user_block_status (
    user_id BIGINT NOT NULL PRIMARY KEY,
    status TINYINT NOT NULL DEFAULT 0,
    updated_time DATETIME(3) NOT NULL,
    page VARCHAR(255) CHARACTER SET ascii NOT NULL DEFAULT '',  -- what the check looks at
    KEY idx_updated_time (updated_time)
) ENGINE = InnoDB;
-- A table from before `page` was added gets it (the worker reads it from its task).
ALTER TABLE user_block_status ADD COLUMN IF NOT EXISTS
    page VARCHAR(255) CHARACTER SET ascii NOT NULL DEFAULT '';

-- Distinct times (1 ms apart), as real check times are: claims sweep forward by updated_time.
INSERT IGNORE INTO user_block_status (user_id, updated_time, page)
SELECT seq, NOW(3) - INTERVAL 1 HOUR - INTERVAL seq * 1000 MICROSECOND,
       CONCAT('https://example.com/users/', seq)
FROM seq_1_to_100000000
WHERE seq <= COALESCE(@rows, 100000);
