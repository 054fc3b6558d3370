-- What a fair claim read costs: the claim statements of a queue with group_by, measured in
-- the server (MariaDB 10.11). Run by bench/scripts/fair_claim.sh; see docs/fairness.md.
--   fill(rows, keys, noisy): `rows` due rows; with noisy = 0 the keys take turns (row i has key
--     i % keys), with noisy = 1 key 0 holds all rows but 100 per other key, and its rows come
--     first in run_at order.
--   claim_*(claims, batch, ...): `claims` claims in a row of up to `batch` rows each, every
--     claim stamping its rows' leases as the dispatcher does (so later claims pass over rows in
--     flight); prints the mean and the slowest claim in ms and the rows claimed.
CREATE TABLE IF NOT EXISTS jobs (
  id BIGINT NOT NULL PRIMARY KEY,
  tenant_id INT NOT NULL,
  run_at DATETIME(3) NOT NULL,
  rp_token VARCHAR(64) NULL,
  rp_lease_until DATETIME(3) NULL,
  rp_attempts INT NOT NULL DEFAULT 0,
  rp_last_error VARCHAR(255) NULL,
  rp_dead_at DATETIME(3) NULL,
  KEY rp_lease_idx (rp_lease_until),
  KEY by_run (run_at),
  KEY by_tenant (tenant_id, run_at)
) ENGINE=InnoDB;

DELIMITER //

CREATE OR REPLACE PROCEDURE fill(n INT, k INT, noisy INT)
BEGIN
  TRUNCATE jobs;
  IF noisy = 0 THEN
    SET @s = CONCAT('INSERT INTO jobs (id, tenant_id, run_at) SELECT seq, seq % ', k,
                    ', NOW(3) - INTERVAL 2 DAY + INTERVAL seq * 100 MICROSECOND FROM seq_1_to_', n);
  ELSE
    -- key 0 first in run_at order, then 100 rows for each of keys 1 .. k-1
    SET @s = CONCAT('INSERT INTO jobs (id, tenant_id, run_at) SELECT seq, IF(seq <= ', n - 100 * (k - 1),
                    ', 0, 1 + (seq - ', n - 100 * (k - 1), ' - 1) % ', k - 1,
                    '), NOW(3) - INTERVAL 2 DAY + INTERVAL seq * 100 MICROSECOND FROM seq_1_to_', n);
  END IF;
  PREPARE st FROM @s; EXECUTE st; DEALLOCATE PREPARE st;
  ANALYZE TABLE jobs PERSISTENT FOR ALL;
END //

CREATE OR REPLACE PROCEDURE unclaim()
BEGIN
  UPDATE jobs SET rp_token = NULL, rp_lease_until = NULL WHERE rp_lease_until IS NOT NULL;
END //

CREATE OR REPLACE PROCEDURE report(what VARCHAR(200), claims INT, total_us BIGINT, worst_us BIGINT, got BIGINT, quiet BIGINT)
BEGIN
  SELECT what AS `read`, ROUND(total_us / claims / 1000, 1) AS mean_ms, ROUND(worst_us / 1000, 1) AS max_ms,
         got AS rows_claimed, quiet AS rows_of_keys_not_0;
END //

-- Today's claim: rows in order_by order, going on from the last claim's run_at.
CREATE OR REPLACE PROCEDURE claim_ordered(claims INT, batch INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  DECLARE t0, t1 DATETIME(6);
  DECLARE total, worst, got BIGINT DEFAULT 0;
  SET @cursor = '1000-01-01';
  WHILE i < claims DO
    SET t0 = SYSDATE(6);
    SET @lease = UTC_TIMESTAMP(3) + INTERVAL 1 HOUR + INTERVAL i * 1000 MICROSECOND;
    UPDATE jobs AS t JOIN (
      SELECT id FROM jobs
      WHERE (run_at <= NOW(3)) AND rp_dead_at IS NULL AND (rp_lease_until IS NULL OR rp_lease_until <= UTC_TIMESTAMP(3))
        AND run_at >= @cursor
      ORDER BY run_at LIMIT batch FOR UPDATE SKIP LOCKED) AS c ON t.id = c.id
    SET t.rp_token = CONCAT('b', i), t.rp_lease_until = @lease;
    SET got = got + ROW_COUNT();
    SELECT MAX(run_at) INTO @cursor FROM jobs WHERE rp_lease_until = @lease;
    SET t1 = SYSDATE(6);
    SET total = total + TIMESTAMPDIFF(MICROSECOND, t0, t1);
    SET worst = GREATEST(worst, TIMESTAMPDIFF(MICROSECOND, t0, t1));
    SET i = i + 1;
  END WHILE;
  CALL report(CONCAT('ordered (today), batch ', batch), claims, total, worst, got,
              (SELECT COUNT(*) FROM jobs WHERE rp_lease_until IS NOT NULL AND tenant_id <> 0));
  CALL unclaim();
END //

-- One statement: ROW_NUMBER() per key over every claimable row, the first `per_key` of each.
CREATE OR REPLACE PROCEDURE claim_window(claims INT, batch INT, per_key INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  DECLARE t0, t1 DATETIME(6);
  DECLARE total, worst, got BIGINT DEFAULT 0;
  WHILE i < claims DO
    SET t0 = SYSDATE(6);
    UPDATE jobs AS t JOIN (
      SELECT id FROM (
        SELECT id, run_at, ROW_NUMBER() OVER (PARTITION BY tenant_id ORDER BY run_at) AS rn
        FROM jobs
        WHERE (run_at <= NOW(3)) AND rp_dead_at IS NULL AND (rp_lease_until IS NULL OR rp_lease_until <= UTC_TIMESTAMP(3))) AS w
      WHERE rn <= per_key ORDER BY rn, run_at LIMIT batch) AS c ON t.id = c.id
    SET t.rp_token = CONCAT('w', i), t.rp_lease_until = UTC_TIMESTAMP(3) + INTERVAL 1 HOUR;
    SET got = got + ROW_COUNT();
    SET t1 = SYSDATE(6);
    SET total = total + TIMESTAMPDIFF(MICROSECOND, t0, t1);
    SET worst = GREATEST(worst, TIMESTAMPDIFF(MICROSECOND, t0, t1));
    SET i = i + 1;
  END WHILE;
  CALL report(CONCAT('window ROW_NUMBER, batch ', batch, ', ', per_key, ' per key'), claims, total, worst, got,
              (SELECT COUNT(*) FROM jobs WHERE rp_lease_until IS NOT NULL AND tenant_id <> 0));
  CALL unclaim();
END //

-- The key ring: the table's keys, listed by a loose index scan of the (key, order_by) index
-- (one index dive per key), at the start and whenever the ring has gone round; each claim
-- takes the next `keys_per_claim` keys of the ring that are not idle, and up to
-- batch / keys_per_claim rows of each through one UNION ALL of per-key index reads. Each key
-- keeps a cursor, as today's claim does for the whole queue: its next read goes on from the
-- run_at its last full read ended at, so rows in flight at the head of a key are not read
-- again; a read that comes back short clears the cursor, and a key whose read found no row
-- is idle until the ring is listed again.
CREATE OR REPLACE PROCEDURE claim_keys(claims INT, batch INT, keys_per_claim INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  DECLARE t0, t1 DATETIME(6);
  DECLARE total, worst, got, listing BIGINT DEFAULT 0;
  DECLARE found, per_key, listed INT DEFAULT 0;
  DECLARE ring_at BIGINT DEFAULT 0;
  SET SESSION group_concat_max_len = 100000000;
  CREATE OR REPLACE TEMPORARY TABLE key_ring (pos INT NOT NULL PRIMARY KEY, g INT NOT NULL,
    idle INT NOT NULL DEFAULT 0, cursor_at DATETIME(3) NULL, KEY (g));
  WHILE i < claims DO
    SET t0 = SYSDATE(6);
    IF ring_at > 0 AND NOT EXISTS (SELECT 1 FROM key_ring WHERE pos > ring_at AND idle = 0) THEN
      SET ring_at = 0;  -- the ring went round: list it again now, not one claim later
    END IF;
    IF ring_at = 0 THEN
      -- a plain read (INSERT ... SELECT would be a locking one, without the loose scan)
      SET @ring = (SELECT GROUP_CONCAT(tenant_id ORDER BY tenant_id) FROM
                     (SELECT tenant_id FROM jobs GROUP BY tenant_id ORDER BY tenant_id LIMIT 100000) AS d);
      SET listing = listing + TIMESTAMPDIFF(MICROSECOND, t0, SYSDATE(6));
      SET listed = listed + 1;
      -- keep the cursors of keys listed again
      CREATE OR REPLACE TEMPORARY TABLE old_ring AS SELECT g, cursor_at FROM key_ring;
      TRUNCATE key_ring;
      INSERT INTO key_ring (pos, g, cursor_at)
        SELECT j.pos, j.g, o.cursor_at FROM JSON_TABLE(CONCAT('[', @ring, ']'), '$[*]' COLUMNS (pos FOR ORDINALITY, g INT PATH '$')) AS j
        LEFT JOIN old_ring AS o ON o.g = j.g;
    END IF;
    SELECT GROUP_CONCAT(g ORDER BY pos), COUNT(*), MAX(pos) INTO @keys, found, @last FROM
      (SELECT pos, g FROM key_ring WHERE pos > ring_at AND idle = 0 ORDER BY pos LIMIT keys_per_claim) AS n;
    SET ring_at = IF(found < keys_per_claim, 0, @last);
    IF found > 0 THEN
      SET per_key = CEIL(batch / found);
      SET @lease = UTC_TIMESTAMP(3) + INTERVAL 1 HOUR + INTERVAL i * 1000 MICROSECOND;
      SELECT GROUP_CONCAT(CONCAT('(SELECT id FROM jobs WHERE tenant_id = ', r.g,
                                 ' AND (run_at <= NOW(3)) AND rp_dead_at IS NULL AND (rp_lease_until IS NULL OR rp_lease_until <= UTC_TIMESTAMP(3))',
                                 IF(r.cursor_at IS NULL, '', CONCAT(' AND run_at >= ''', r.cursor_at, '''')),
                                 ' ORDER BY run_at LIMIT ', per_key, ' FOR UPDATE SKIP LOCKED)') SEPARATOR ' UNION ALL ')
        INTO @branches FROM JSON_TABLE(CONCAT('[', @keys, ']'), '$[*]' COLUMNS (g INT PATH '$')) AS j
        JOIN key_ring AS r ON r.g = j.g;
      SET @s = CONCAT('UPDATE jobs AS t JOIN (', @branches, ') AS c ON t.id = c.id SET t.rp_token = ''k', i,
                      ''', t.rp_lease_until = @lease');
      PREPARE st FROM @s; EXECUTE st;
      SET got = got + ROW_COUNT();
      DEALLOCATE PREPARE st;
      -- what the read-back of the claim tells (through the lease index): each key's rows and
      -- last run_at; a full share moves the key's cursor, a short one clears it, none idles it
      CREATE OR REPLACE TEMPORARY TABLE taken AS
        SELECT tenant_id AS g, COUNT(*) AS n, MAX(run_at) AS last_at FROM jobs WHERE rp_lease_until = @lease GROUP BY tenant_id;
      UPDATE key_ring AS r LEFT JOIN taken AS k ON k.g = r.g
        SET r.idle = IF(k.g IS NULL, 1, 0), r.cursor_at = IF(k.n >= per_key, k.last_at, NULL)
        WHERE FIND_IN_SET(r.g, @keys);
    END IF;
    SET t1 = SYSDATE(6);
    SET total = total + TIMESTAMPDIFF(MICROSECOND, t0, t1);
    SET worst = GREATEST(worst, TIMESTAMPDIFF(MICROSECOND, t0, t1));
    SET i = i + 1;
  END WHILE;
  CALL report(CONCAT('key ring + per-key UNION, batch ', batch, ', ', keys_per_claim, ' keys per claim (ring listed ',
                     listed, 'x, ', ROUND(listing / GREATEST(listed, 1) / 1000, 1), ' ms each)'), claims, total, worst, got,
              (SELECT COUNT(*) FROM jobs WHERE rp_lease_until IS NOT NULL AND tenant_id <> 0));
  CALL unclaim();
END //

DELIMITER ;
