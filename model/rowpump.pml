/*
 * rowpump's queue protocol, for spin. docs/model.md says what each step stands for (the file
 * and function that does it), what is left out, and how scripts/model-check.sh checks it.
 *
 * One queue: NR rows of the task table (MySQL), the queue's Redis keys, ND dispatchers (one
 * leads, the others stand by) and NW workers. Every step is atomic: one SQL statement or
 * transaction, one Redis command or script, as in the code. Time is not a clock: a lease
 * ends, a heartbeat lapses, a leader lock expires as steps of their own, at any moment, except
 * where a timing rule of the code forbids it (each rule is stated at its step).
 *
 * -DOLD_LEASE    the protocol before leases were renewed: a lease started at the claim and was
 *                never extended, so a task that waited longer than its lease was claimed and
 *                pushed again, and an outcome waiting in the done list could be overtaken by
 *                a new claim.
 * -DREDUE        a completed row comes due again (a periodic re-check), so the queue never
 *                runs dry; default: each row is due once.
 * -DRETRY_VERB   handlers may also report retry (default: ok only; retries still come from
 *                tasks taken back from dead workers).
 * -DMAXF=n       faults per run (default 1): a dispatcher or a worker killed, a leader or a
 *                worker frozen past its lock or heartbeat, Redis restarted without its data.
 * -DREDIS_CLAIM  the queue's `claim: redis` mode: nothing is written to the row until the
 *                outcome; the leader keeps the tasks it pushed in memory (in flight), each
 *                until its lease ends while no list holds it, learns them from the Redis
 *                lists when it takes over, and an outcome applies only to a task in flight
 *                with its token, fenced by the row: not dead nor in a backoff, and still at
 *                the version its task was read at (the settled token of the row's last
 *                outcome, which the task's token carries).
 * -DNO_VERSION_FENCE  with -DREDIS_CLAIM: the fence without the row's version (claimable, and
 *                not holding the task's settled token yet), which applies a late copy of an
 *                outcome in a later due period (docs/model.md); the check keeps finding it.
 * -DKEYED       the queue has `group_by` and `concurrency_per_key: PER_KEY` (default 1), and
 *                every row has the same key: before each claim the leader counts the key's
 *                rows in flight (lease running, outcome not applied: QueueSql::in_flight_by_key)
 *                and claims at most the rest of its allowance. Property: the key's tasks in
 *                flight (its rows' current tasks that Redis holds: ready, taken, or reported
 *                and not applied) never exceed PER_KEY. Not with -DREDIS_CLAIM (group_by
 *                works with claim: mysql only).
 * -DNO_DONE_COUNT  with -DKEYED: the count leaves out rows whose task is reported and waiting
 *                in the done list, so a key's next row is pushed before the outcome is
 *                applied; the check keeps finding it.
 * -DNR=1, -DMAXB, -DBATCH, -DNT  rows, max_backlog, claim batch, tokens per row (smaller
 *                searches; defaults 2, 2, 2, 7).
 */

#ifndef NR
#define NR 2 /* rows: 2, or 1 (a smaller search) */
#endif
#define NW 2 /* workers */
#define ND 2 /* dispatchers */
#ifndef MAXB
#define MAXB 2 /* max_backlog: ready messages at most */
#endif
#ifndef BATCH
#define BATCH 2 /* rows per claim at most */
#endif
#ifndef NT
#define NT 7 /* claim tokens per row: 1..NT, reused once no message carries them */
#endif
#define DCAP 4 /* done list slots (asserted never to overflow) */
#define MAX_ATTEMPTS 2
#ifndef MAXF
#define MAXF 1
#endif
#ifndef PER_KEY
#define PER_KEY 1 /* concurrency_per_key, with -DKEYED */
#endif
#if defined(KEYED) && defined(REDIS_CLAIM)
#error group_by works with claim: mysql only
#endif

/* A ready message <id>:<token> is MSG(row, token); a done message adds the verb. With
 * claim: redis the token also carries the row's version when the row was read: VERSIONED. */
#define MSG(r, t) ((r) * 8 + (t))
#define ROW(m) (((m) >> 3) & 1)
#define TOK(m) ((m) & 7)
#define TASK(m) ((m) & 15)
#define RETRY 16 /* done message verb: retry (else ok) */
#define VERSIONED(t, v) ((t) + (v) * 32) /* a token read at row version v (claim: redis) */
#define VER(m) (((m) >> 5) & 7)

/* Lease of a row: none (NULL), running, ended. Ending is time passing, not a write. */
#define NONE 0
#define LIVE 1
#define ENDED 2

/* The leader lock's value: nobody, dispatcher d + 1, or the id of a dispatcher killed. */
#define NOBODY 0
#define ORPHAN 3
#define ME (d + 1)

/* Dispatcher phases: the steps of QueueRunner::cycle, in order. */
#define LEAD 0
#define APPLY_REAPED 1
#define CLAIM 2
#define PUSH 3
#define RELEASE 4
#define ACK 5

/* ---- MySQL: the task table (the due condition and the bookkeeping columns) ---- */
bit due[NR] = 1; /* the operator's due condition holds (every row, at the start) */
bit dead[NR];    /* rp_dead_at is set */
byte tok[NR];    /* rp_token: the claim token, 0 = NULL; with claim: redis the settled token
                  * of the row's last outcome, which is the row's version */
bit settled[NR]; /* rp_token holds the settled form of tok: an outcome was applied */
byte lease[NR];  /* rp_lease_until: NONE, LIVE or ENDED */
byte att[NR];    /* rp_attempts */

/* ---- Redis: the queue's keys ---- */
byte ready[MAXB + BATCH]; /* rowpump:{q}:ready */
byte nready;
byte done[DCAP]; /* rowpump:{q}:done */
byte ndone;
byte proc[NW];   /* rowpump:{q}:processing:<w>: one task at most (batch 1) */
bit hb[NW] = 1;  /* rowpump:{q}:heartbeat:<w> exists */
bit listed[NW] = 1; /* w is in rowpump:{q}:workers */
byte leader;     /* rowpump:{q}:leader */

/* ---- the processes' own memory (global, so that a fault can wipe it) ---- */
byte phase[ND];
byte cl[ND * NR]; /* tokens claimed and not pushed yet, per row */
byte got[ND];     /* the done message take_done read (a batch of one) */
bit pending[ND];  /* read and not applied yet */
byte rp[ND * NW]; /* tasks the reap script took back, not applied yet */
byte hand[NW];    /* the task a worker's handler runs */
bit wdead[NW];    /* the worker process was killed */
byte faults;

#ifdef REDIS_CLAIM
byte fl[ND * NR]; /* InFlight: the token of the row's task in flight, 0 = none */
bit flx[ND * NR]; /* the lease of that task ended (while no list held it) */
bit known[ND];    /* InFlight::known: learned from Redis since this dispatcher last forgot */
#endif

/* ---- ghosts, for the properties only ---- */
#ifdef REDIS_CLAIM
byte pushed[NR];   /* tokens (bits) pushed since the row last completed: its due period */
byte outcomes[NR]; /* tokens (bits) whose outcome was applied */
#else
bit applied[NR]; /* an outcome was applied for the row's current claim */
#endif
bit flip;        /* toggles whenever a row completes (on_success, or dead) */

/* Scratch variables of the atomic steps, not part of the state. (-DSCRATCH= makes them
 * visible, for a breadth-first search, which spin refuses with hidden variables.) */
#ifndef SCRATCH
#define SCRATCH hidden
#endif
SCRATCH byte x_i, x_j, x_t, x_m, x_n, x_cap, x_k, x_kf;
SCRATCH int x_used;

#define busy (hand[0] != 0 || hand[1] != 0)
#define completed_row(r) (!due[r] || dead[r])

/* A condition of some row, or of every row */
#if NR == 2
#define ANY_ROW(P) (P(0) || P(1))
#define EVERY_ROW(P) (P(0) && P(1))
#else
#define ANY_ROW(P) (P(0))
#define EVERY_ROW(P) (P(0))
#endif

#ifdef REDUE
/* Every row that stays due is completed (on_success, or dead after its attempts). */
#define STAYS_DUE_COMPLETED(r) ([] ((due[r] && !dead[r]) -> <> completed_row(r)))
ltl rows_complete {
    EVERY_ROW(STAYS_DUE_COMPLETED)
}
/* No livelock: workers do not stay busy while nothing completes. */
ltl no_livelock { ([] <> busy) -> ([] <> flip && [] <> !flip) }
#else
/* Each row is due once, and a completed row stays completed: the same two properties read
 * "every row is completed" and "workers do not stay busy for ever" (a queue with a finite
 * amount of work in which workers stay busy is one in which nothing completes any more). */
ltl rows_complete { <> EVERY_ROW(completed_row) }
ltl no_livelock { <> [] !busy }
#endif

/* ---- helpers ---- */

/* Is task (r, t) held: in the ready list, in a listed worker's processing list, or reported
 * in the done list? kHeldScript (common/lua/held.lua). */
inline held(r, t, result) {
    result = 0;
    for (x_j : 0 .. nready - 1) { if :: TASK(ready[x_j]) == MSG(r, t) -> result = 1 :: else fi }
    for (x_j : 0 .. NW - 1) { if :: listed[x_j] && TASK(proc[x_j]) == MSG(r, t) -> result = 1 :: else fi }
    for (x_j : 0 .. ndone - 1) { if :: TASK(done[x_j]) == MSG(r, t) -> result = 1 :: else fi }
}

/* The same, as an expression (a guard cannot loop): unused slots of the lists hold 0, and no
 * message is 0. */
#if MAXB + BATCH == 4
#define READY_HOLDS(m) (TASK(ready[0]) == (m) || TASK(ready[1]) == (m) || \
                        TASK(ready[2]) == (m) || TASK(ready[3]) == (m))
#elif MAXB + BATCH == 3
#define READY_HOLDS(m) (TASK(ready[0]) == (m) || TASK(ready[1]) == (m) || TASK(ready[2]) == (m))
#elif MAXB + BATCH == 2
#define READY_HOLDS(m) (TASK(ready[0]) == (m) || TASK(ready[1]) == (m))
#endif
#define HELD(m) (READY_HOLDS(m) || (listed[0] && TASK(proc[0]) == (m)) || \
                 (listed[1] && TASK(proc[1]) == (m)) || \
                 TASK(done[0]) == (m) || TASK(done[1]) == (m) || TASK(done[2]) == (m) || \
                 TASK(done[3]) == (m))

#ifdef KEYED
/* QueueSql::in_flight_by_key: a row of the key whose lease runs and whose outcome has not
 * been applied (not settled, not dead): its task is ready, taken, or reported and waiting in
 * the done list. Counted right after the keeper renewed the leases of the tasks Redis holds. */
#define DONE_HOLDS(m) (TASK(done[0]) == (m) || TASK(done[1]) == (m) || TASK(done[2]) == (m) || \
                       TASK(done[3]) == (m))
#ifdef NO_DONE_COUNT
#define COUNTED(r) (tok[r] != 0 && !settled[r] && !dead[r] && lease[r] == LIVE && \
                    !DONE_HOLDS(MSG(r, tok[r])))
#else
#define COUNTED(r) (tok[r] != 0 && !settled[r] && !dead[r] && lease[r] == LIVE)
#endif
/* For the property: a row of the key whose current task (its claim token, not applied yet)
 * Redis holds: in the ready list, a listed worker's processing list or the done list. (A
 * handler that still runs a task taken back from it is not in flight: its report is refused.
 * The chaos run leaves such runs out of its count the same way.) */
#define KEY_IN_FLIGHT(r) (tok[r] != 0 && !settled[r] && !dead[r] && HELD(MSG(r, tok[r])))
#endif

#ifdef REDIS_CLAIM
/* a token carried as a message's token or as its version */
#define USE(m) if :: (m) != 0 && ROW(m) == r -> x_used = x_used | (1 << TOK(m)) | (1 << VER(m)) :: else fi
#define USE_CLAIM(c) x_used = x_used | (1 << TOK(c)) | (1 << VER(c))
#else
#define USE(m) if :: (m) != 0 && ROW(m) == r -> x_used = x_used | (1 << TOK(m)) :: else fi
#define USE_CLAIM(c) x_used = x_used | (1 << (c))
#endif

/* The smallest token of row r that no message, hand or copy carries (with claim: redis, not
 * as a version either): as good as a fresh random token, and the same state whichever token
 * was used before. */
inline fresh(r, result) {
    x_used = 0;
    for (x_j : 0 .. nready - 1) { USE(ready[x_j]) }
    for (x_j : 0 .. ndone - 1) { USE(done[x_j]) }
    for (x_j : 0 .. NW - 1) { USE(proc[x_j]); USE(hand[x_j]) }
    for (x_j : 0 .. ND - 1) { USE_CLAIM(cl[x_j * NR + r]); USE(got[x_j]) }
    for (x_j : 0 .. ND * NW - 1) { USE(rp[x_j]) }
#ifdef REDIS_CLAIM
    /* the row's settled token, and the sets in flight: a random token never meets either */
    x_used = x_used | (1 << tok[r]);
    for (x_j : 0 .. ND - 1) { x_used = x_used | (1 << fl[x_j * NR + r]) }
#endif
    result = 1;
    do
    :: result <= NT && (x_used & (1 << result)) -> result++
    :: else -> break
    od;
    assert(result <= NT) /* NT is too small for this configuration */
}

/* A row completes: on_success, or dead. */
inline completed() {
    flip = !flip;
#ifdef REDIS_CLAIM
    pushed[x_i] = 0; outcomes[x_i] = 0 /* its due period ends */
#endif
}

#define CLAIMABLE(r) (due[r] && !dead[r] && lease[r] != LIVE)
#define APPLICABLE(r) (!dead[r] && lease[r] != LIVE) /* due or not */

/* What an outcome applied does to row x_i (QueueSql::success, retry, dead). reaped: a task
 * taken back from a dead worker, a failed attempt due again at once (delay 0). */
inline take_effect(msg, reaped) {
    if
    :: !(msg & RETRY) && !reaped ->
        assert(due[x_i]); /* on_success takes effect once per completion */
        printf("MSC: row %d token %d: on_success applied\n", x_i, TOK(msg));
        due[x_i] = 0; lease[x_i] = NONE; att[x_i] = 0; completed()
    :: else ->
        att[x_i] = att[x_i] + 1;
        if
        :: att[x_i] >= MAX_ATTEMPTS ->
            printf("MSC: row %d token %d: dead\n", x_i, TOK(msg));
            dead[x_i] = 1; lease[x_i] = NONE; completed()
        :: else ->
            printf("MSC: row %d token %d: retry applied\n", x_i, TOK(msg));
            lease[x_i] = (reaped -> ENDED : LIVE) /* due at once, or after the backoff */
        fi
    fi
}

#ifdef REDIS_CLAIM
/* claim: redis. Applies one outcome, fenced by the row (QueueSql::fence): only to a row that
 * is not dead nor in a retry delay (due or not), does not hold this task's settled token
 * yet and is still at the version the task was read at (the code: a checksum of rp_token,
 * compared exactly here); the row then holds the task's settled token, its new version. So
 * at most one outcome applies per version of the row. */
#ifdef NO_VERSION_FENCE
#define AT_VERSION(msg) 1
#else
#define AT_VERSION(msg) (tok[x_i] == VER(msg))
#endif
inline apply_outcome(msg, reaped) {
    x_i = ROW(msg);
    if
    :: APPLICABLE(x_i) && tok[x_i] != TOK(msg) && AT_VERSION(msg) ->
        /* an outcome is applied at most once per task ... */
        assert(!(outcomes[x_i] & (1 << TOK(msg))));
        /* ... and only in the due period its task was pushed in */
        assert(pushed[x_i] & (1 << TOK(msg)));
        outcomes[x_i] = outcomes[x_i] | (1 << TOK(msg));
        tok[x_i] = TOK(msg);
        take_effect(msg, reaped)
    :: APPLICABLE(x_i) && tok[x_i] == TOK(msg) ->
        printf("MSC: row %d token %d: applied before, counted once\n", x_i, TOK(msg))
    :: APPLICABLE(x_i) && tok[x_i] != TOK(msg) && !AT_VERSION(msg) ->
        printf("MSC: row %d token %d: read at version %d, row at %d, stale\n", x_i, TOK(msg), VER(msg), tok[x_i])
    :: else -> printf("MSC: row %d token %d: row dead or in a backoff, stale\n", x_i, TOK(msg))
    fi
}
#else
/* Applies one outcome, guarded by the token (OutcomeStore::apply, QueueSql::join_values): only
 * a row still carrying the claim token changes, and it keeps the settled form of the token,
 * so the same outcome applied again (a dispatcher killed between the commit and the
 * acknowledgement) finds it settled and counts once. */
inline apply_outcome(msg, reaped) {
    x_i = ROW(msg);
    if
    :: tok[x_i] == TOK(msg) && !settled[x_i] ->
        assert(!applied[x_i]); /* an outcome is applied at most once per claim */
        applied[x_i] = 1;
        settled[x_i] = 1;
        take_effect(msg, reaped)
    :: tok[x_i] == TOK(msg) && settled[x_i] ->
        printf("MSC: row %d token %d: applied before, counted once\n", x_i, TOK(msg))
    :: else -> printf("MSC: row %d token %d: stale, ignored\n", x_i, TOK(msg))
    fi
}
#endif

/* Something for a cycle to do; an idle leader polls without changing anything. */
#ifdef REDIS_CLAIM
/* A row to push is claimable and not in flight; a task in flight that no list holds is
 * dropped by the audit once its lease ended. */
#define FREE(r) (CLAIMABLE(r) && fl[d * NR + r] == 0)
#define LOST(r) (fl[d * NR + r] != 0 && flx[d * NR + r] && !HELD(MSG(r, fl[d * NR + r])))
#define WORK (ndone > 0 || (listed[0] && !hb[0]) || (listed[1] && !hb[1]) || !known[d] || \
              (nready < MAXB && ANY_ROW(FREE)) || ANY_ROW(LOST))
#else
#define WORK (ndone > 0 || (listed[0] && !hb[0]) || (listed[1] && !hb[1]) || \
              (nready < MAXB && ANY_ROW(CLAIMABLE)))
#endif

#ifdef REDIS_CLAIM
/* ---- claim: redis: the leader's tasks in flight (dispatcher/src/loop/in_flight.cpp) ---- */

/* InFlight::forget: after LeadershipLost, a Redis error, or a connect() that does not lead */
inline forget(k) {
    for (x_i : 0 .. NR - 1) { fl[k * NR + x_i] = 0; flx[k * NR + x_i] = 0 }
    known[k] = 0
}

/* ScanClaim::on_lead: InFlight::learn of RedisQueue::held_all (kHeldScript with no
 * arguments: the ready list, the processing lists of listed workers, the done list; of two
 * tasks of one row, the later one wins), added to what it knows: a new leader (after forget)
 * knows nothing, one that took its lock back free keeps its own tasks */
#define LEARN(k, m) fl[k * NR + ROW(m)] = TOK(m); flx[k * NR + ROW(m)] = 0
inline learn(k) {
    for (x_j : 0 .. nready - 1) { LEARN(k, ready[x_j]) }
    for (x_j : 0 .. NW - 1) {
        if :: listed[x_j] && proc[x_j] != 0 -> LEARN(k, proc[x_j]) :: else fi
    }
    for (x_j : 0 .. ndone - 1) { LEARN(k, done[x_j]) }
    known[k] = 1
}

/* InFlight::finished: an applied task leaves the set, if the set still holds its token */
inline finished(k, m) {
    if :: fl[k * NR + ROW(m)] == TOK(m) -> fl[k * NR + ROW(m)] = 0 :: else fi
}

/* ScanClaim::before_claim: InFlight::audit(RedisQueue::held(...), reaped): a task Redis
 * holds gets a new lease; one in flight that no list holds, not taken back and still to be
 * applied, is dropped once its lease ended */
inline audit(k) {
    for (x_i : 0 .. NR - 1) {
        if
        :: fl[k * NR + x_i] != 0 && HELD(MSG(x_i, fl[k * NR + x_i])) -> flx[k * NR + x_i] = 0
        :: fl[k * NR + x_i] != 0 && !HELD(MSG(x_i, fl[k * NR + x_i])) && !flx[k * NR + x_i]
        :: fl[k * NR + x_i] != 0 && !HELD(MSG(x_i, fl[k * NR + x_i])) && flx[k * NR + x_i] ->
            x_t = 0;
            for (x_j : 0 .. NW - 1) {
                if :: rp[k * NW + x_j] != 0 && ROW(rp[k * NW + x_j]) == x_i -> x_t = 1 :: else fi
            }
            if
            :: !x_t ->
                printf("MSC: D%d: task %d:%d is in no list, dropped\n", k, x_i, fl[k * NR + x_i]);
                fl[k * NR + x_i] = 0
            :: else
            fi
        :: else
        fi
    }
}

/* Does a Redis list hold a task of row r, whatever its token? */
inline row_held(r, result) {
    result = 0;
    for (x_j : 0 .. nready - 1) { if :: ROW(ready[x_j]) == r -> result = 1 :: else fi }
    for (x_j : 0 .. NW - 1) { if :: listed[x_j] && proc[x_j] != 0 && ROW(proc[x_j]) == r -> result = 1 :: else fi }
    for (x_j : 0 .. ndone - 1) { if :: ROW(done[x_j]) == r -> result = 1 :: else fi }
}
#endif

/* ---- the dispatcher: dispatcher/src/loop/queue_runner.cpp, QueueRunner::run and ::cycle ---- */

active [ND] proctype Dispatcher() {
    byte d = _pid;
end:
    do
    /* a stand-by waits; the lock of a dispatcher that was killed expires (leader_timeout) */
    :: atomic { phase[d] == LEAD && leader == ORPHAN -> leader = NOBODY }
#ifdef REDIS_CLAIM
    /* connect() while another holds the lock: ScanClaim::on_lead forgets (or it froze and did
     * not run) */
    :: atomic { phase[d] == LEAD && leader != ME && leader != NOBODY && known[d] -> forget(d) }
#endif

    /* QueueRunner::connect: the lead script (kLeadScript); then cycle(): take_done (LRANGE
     * of the done list) and reap_dead_workers (kReapScript: a listed worker without a
     * heartbeat loses its processing list and its place in the workers set) */
    :: atomic { phase[d] == LEAD && (leader == NOBODY || (leader == ME && WORK)) ->
        if :: leader != ME -> printf("MSC: D%d takes the leader lock\n", d) :: else fi;
#ifdef REDIS_CLAIM
        /* the lead script says the lock was free: whatever this dispatcher knew may miss
         * another leader's pushes (RedisQueue::lead, took_free): it learns them as well */
        if :: !known[d] || leader == NOBODY -> learn(d) :: else fi;
#endif
        leader = ME;
        got[d] = (ndone > 0 -> done[0] : 0);
        pending[d] = (got[d] != 0);
        if :: got[d] != 0 -> printf("MSC: D%d reads done %d:%d\n", d, ROW(got[d]), TOK(got[d])) :: else fi;
#ifdef REDIS_CLAIM
        /* ScanClaim::on_outcomes_taken: only a task in flight with this token applies */
        if
        :: got[d] != 0 && fl[d * NR + ROW(got[d])] != TOK(got[d]) ->
            printf("MSC: D%d: %d:%d is stale (%d in flight)\n", d, ROW(got[d]), TOK(got[d]), fl[d * NR + ROW(got[d])]);
            pending[d] = 0
        :: else
        fi;
#endif
        x_n = 0;
        for (x_i : 0 .. NW - 1) {
            if
            :: listed[x_i] && !hb[x_i] ->
                rp[d * NW + x_i] = proc[x_i]; proc[x_i] = 0; listed[x_i] = 0;
                x_n = x_n + (rp[d * NW + x_i] != 0)
            :: else
            fi
        }
        phase[d] = (x_n > 0 -> APPLY_REAPED : CLAIM) }

    /* Reaper::apply: each task taken back is a failed attempt */
    :: atomic { phase[d] == APPLY_REAPED ->
        for (x_t : 0 .. NW - 1) {
            if
            :: rp[d * NW + x_t] != 0 ->
                printf("MSC: D%d took back task %d:%d\n", d, ROW(rp[d * NW + x_t]), TOK(rp[d * NW + x_t]));
                apply_outcome(rp[d * NW + x_t], 1);
#ifdef REDIS_CLAIM
                finished(d, rp[d * NW + x_t]);
#endif
                rp[d * NW + x_t] = 0
            :: else
            fi
        }
        phase[d] = (phase[d] == APPLY_REAPED -> CLAIM : LEAD) }

    /* the outcome transaction (OutcomeStore::apply, on the outcome session): before the
     * claim, in a thread beside it (while a sweep resumes; with claim: redis always), or
     * after the push (in a cycle a nudge started), so possibly after the push */
#ifdef REDIS_CLAIM
    :: atomic { pending[d] && phase[d] != LEAD ->
#else
    :: atomic { pending[d] && (phase[d] == CLAIM || phase[d] == ACK) ->
#endif
        apply_outcome(got[d], 0);
        pending[d] = 0 }

    /* LLEN for the capacity, LeaseKeeper::keep, ClaimStore::claim. The keeper's look and the
     * claim are one step: the code claims within lease/8 of a look that renewed every held
     * lease ending within lease/2, so no held lease ends in between (README: unless the
     * dispatcher freezes for more than half a lease between the two). With claim: redis:
     * ScanClaim::before_claim, then ScanClaim::claim (ScanStore::scan_retried, scan: a read that
     * writes nothing), which passes over the rows in flight. */
    :: atomic { phase[d] == CLAIM ->
        x_cap = (MAXB - nready < BATCH -> MAXB - nready : BATCH);
        x_n = 0;
#ifdef REDIS_CLAIM
        audit(d);
#endif
        if
        :: x_cap > 0 ->
#if !defined(OLD_LEASE) && !defined(REDIS_CLAIM)
            /* LeaseKeeper::keep_page: ClaimStore::expiring, RedisQueue::held (kHeldScript),
             * ClaimStore::renew */
            for (x_i : 0 .. NR - 1) {
                if
                :: tok[x_i] != 0 && !settled[x_i] && !dead[x_i] && lease[x_i] != NONE ->
                    held(x_i, tok[x_i], x_m);
                    if :: x_m -> lease[x_i] = LIVE :: else fi
                :: else
                fi
            }
#endif
#ifdef KEYED
            /* GroupedClaimStore: the key's allowance, concurrency_per_key minus its rows in
             * flight; a claim takes at most that many rows of the key */
            x_k = 0;
            for (x_i : 0 .. NR - 1) { if :: COUNTED(x_i) -> x_k++ :: else fi }
            x_k = (x_k >= PER_KEY -> 0 : PER_KEY - x_k);
#endif
            /* claim_expired first (ORDER BY the lease), then the other due rows */
            for (x_t : 0 .. 1) {
                for (x_i : 0 .. NR - 1) {
                    if
                    :: x_n < x_cap && due[x_i] && !dead[x_i] &&
#ifdef KEYED
                       x_k > 0 &&
#endif
#ifdef REDIS_CLAIM
                       fl[d * NR + x_i] == 0 &&
#endif
                       ((x_t == 0 && lease[x_i] == ENDED) || (x_t == 1 && lease[x_i] == NONE)) ->
#ifdef REDIS_CLAIM
                        fresh(x_i, x_m);
                        printf("MSC: D%d reads row %d at version %d: token %d\n", d, x_i, tok[x_i], x_m);
                        x_m = VERSIONED(x_m, tok[x_i]);
#else
                        if
                        :: tok[x_i] != 0 && !settled[x_i] ->
                            /* outcomes first: a reported outcome is never made stale by a claim */
                            for (x_j : 0 .. ndone - 1) { assert(TASK(done[x_j]) != MSG(x_i, tok[x_i])) }
                        :: else
                        fi;
                        fresh(x_i, x_m);
                        printf("MSC: D%d claims row %d: token %d\n", d, x_i, x_m);
                        tok[x_i] = x_m; settled[x_i] = 0; lease[x_i] = LIVE; applied[x_i] = 0;
#endif
                        cl[d * NR + x_i] = x_m;
#ifdef KEYED
                        x_k--;
#endif
                        x_n++
                    :: else
                    fi
                }
            }
        :: else
        fi;
        phase[d] = (x_n > 0 -> PUSH : (got[d] != 0 -> ACK : LEAD)) }

    /* RedisQueue::push (kPushScript): RPUSH only while this dispatcher holds the lock */
    :: atomic { phase[d] == PUSH ->
        if
        :: leader == ME ->
            for (x_i : 0 .. NR - 1) {
                if
                :: cl[d * NR + x_i] != 0 ->
                    printf("MSC: D%d pushes %d:%d\n", d, x_i, TOK(cl[d * NR + x_i]));
#ifdef REDIS_CLAIM
                    row_held(x_i, x_m);
                    assert(!x_m); /* a row is pushed once while a task of it is held */
                    fl[d * NR + x_i] = TOK(cl[d * NR + x_i]); /* InFlight::add */
                    flx[d * NR + x_i] = 0;
                    pushed[x_i] = pushed[x_i] | (1 << TOK(cl[d * NR + x_i]));
                    outcomes[x_i] = outcomes[x_i] & ~(1 << TOK(cl[d * NR + x_i]));
#endif
                    ready[nready] = MSG(x_i, cl[d * NR + x_i]); nready++; cl[d * NR + x_i] = 0
                :: else
                fi
            }
            assert(nready <= MAXB); /* the ready list never grows past max_backlog */
#ifdef KEYED
            /* tasks of one key in flight never exceed concurrency_per_key (a push is the only
             * step that adds one) */
            x_kf = 0;
            for (x_i : 0 .. NR - 1) { if :: KEY_IN_FLIGHT(x_i) -> x_kf++ :: else fi }
            assert(x_kf <= PER_KEY);
#endif
            phase[d] = (got[d] != 0 -> ACK : LEAD)
        :: else -> phase[d] = RELEASE
        fi }

    /* the push was refused by the lock: ClaimStore::release, then LeadershipLost (with
     * claim: redis nothing was written to release; the set stays until the next lead
     * script: forgotten if another leads, learned again if the lock is taken back free) */
    :: atomic { phase[d] == RELEASE ->
        printf("MSC: D%d: push refused, claims released\n", d);
        for (x_i : 0 .. NR - 1) {
            if
            :: cl[d * NR + x_i] != 0 && tok[x_i] == cl[d * NR + x_i] && !settled[x_i] ->
                tok[x_i] = 0; lease[x_i] = NONE
            :: else
            fi;
            cl[d * NR + x_i] = 0
        }
        phase[d] = (got[d] != 0 -> ACK : LEAD) }

    /* RedisQueue::ack_done (kAckDoneScript): trims what it read, fenced by the lock */
    :: atomic { phase[d] == ACK && !pending[d] ->
        if
        :: leader == ME ->
            assert(ndone > 0 && done[0] == got[d]); /* trims exactly what it read */
            for (x_i : 1 .. ndone - 1) { done[x_i - 1] = done[x_i] }
            ndone--; done[ndone] = 0;
#ifdef REDIS_CLAIM
            finished(d, got[d]) /* ScanClaim::on_outcomes_finished */
#endif
        :: else; /* refused: LeadershipLost (with claim: redis, as after a refused push) */
        fi;
        got[d] = 0;
        phase[d] = LEAD }
    od
}

/* ---- the worker SDK: worker-sdk/src/serve_loop.cpp with batch 1 ---- */

active [NW] proctype Worker() {
    byte w = _pid - ND;
end:
    do
    /* Fetcher::fetch: BLMOVE ready -> processing. A worker whose heartbeat lapsed (a freeze,
     * Redis data lost) beats again first: in the code the two race for milliseconds, which
     * would matter only to a lease ending within them (docs/model.md). */
    :: atomic { !wdead[w] && hb[w] && listed[w] && hand[w] == 0 && nready > 0 ->
        printf("MSC: W%d takes %d:%d\n", w, ROW(ready[0]), TOK(ready[0]));
        hand[w] = ready[0]; proc[w] = ready[0];
        for (x_i : 1 .. nready - 1) { ready[x_i - 1] = ready[x_i] }
        nready--; ready[nready] = 0 }

    /* Reporter (kCompleteScript): the task moves to the done list if it is still ours */
    :: atomic { !wdead[w] && hand[w] != 0 ->
        if
        :: proc[w] == hand[w] ->
            printf("MSC: W%d reports %d:%d\n", w, ROW(hand[w]), TOK(hand[w]));
            proc[w] = 0;
            assert(ndone < DCAP);
#ifdef RETRY_VERB
            if :: done[ndone] = hand[w] :: done[ndone] = hand[w] | RETRY fi;
#else
            done[ndone] = hand[w];
#endif
            ndone++
        :: else -> printf("MSC: W%d: report refused (taken back)\n", w)
        fi;
        hand[w] = 0 }

    /* Membership::beat: SET heartbeat PX ttl, SADD workers (when either is missing) */
    :: atomic { !wdead[w] && !(hb[w] && listed[w]) -> hb[w] = 1; listed[w] = 1 }

    /* a killed worker's heartbeat expires ... */
    :: atomic { wdead[w] && hb[w] -> hb[w] = 0 }
    /* ... and it starts again under a new id once the old one is reaped or unlisted (nobody
     * looks at an unlisted worker's processing list, so dropping it changes nothing);
     * Membership::join beats before the first fetch */
    :: atomic { wdead[w] && !hb[w] && !listed[w] -> wdead[w] = 0; proc[w] = 0; hb[w] = 1; listed[w] = 1 }
    od
}

/* ---- time, per row ---- */

active [NR] proctype Row() {
    byte r = _pid - ND - NW;
end:
    do
    /* A lease ends. Not before its claim is pushed: a lease runs for minutes, a cycle for
     * milliseconds (a dispatcher killed in between drops the claim; then the lease ends). */
#ifdef REDIS_CLAIM
    /* claim: redis: a lease is only a retry's backoff, which ends */
    :: atomic { lease[r] == LIVE ->
#else
    :: atomic { lease[r] == LIVE && cl[r] != tok[r] && cl[NR + r] != tok[r] ->
#endif
        printf("MSC: row %d: lease ended\n", r);
        lease[r] = ENDED }
#ifdef REDIS_CLAIM
    /* the lease of a task in flight that no list holds ends (while a list holds it, the
     * audit renews it: its end matters only once no list does) */
    :: atomic { fl[r] != 0 && !flx[r] && !HELD(MSG(r, fl[r])) -> flx[r] = 1 }
    :: atomic { fl[NR + r] != 0 && !flx[NR + r] && !HELD(MSG(r, fl[NR + r])) -> flx[NR + r] = 1 }
#endif
#ifdef REDUE
    /* a completed row comes due again */
    :: atomic { !due[r] && !dead[r] -> printf("MSC: row %d comes due again\n", r); due[r] = 1 }
#endif
    od
}

/* ---- faults: up to MAXF per run, at any moment, then none ---- */

/* kill -9 of dispatcher k: it starts again under a new id; its lock is orphaned */
inline kill_dispatcher(k) {
    printf("MSC: fault: D%d killed\n", k);
    phase[k] = LEAD; got[k] = 0; pending[k] = 0;
    for (x_i : 0 .. NR - 1) { cl[k * NR + x_i] = 0 }
    for (x_i : 0 .. NW - 1) { rp[k * NW + x_i] = 0 }
#ifdef REDIS_CLAIM
    forget(k);
#endif
    if :: leader == k + 1 -> leader = ORPHAN :: else fi
}

active proctype Faults() {
    do
    :: atomic { faults < MAXF ->
        faults++;
        if
        :: kill_dispatcher(0)
        :: kill_dispatcher(1)
        /* the leader froze past leader_timeout: its lock lapsed, and it goes on */
        :: leader == 1 || leader == 2 -> printf("MSC: fault: leader lock lapsed\n"); leader = NOBODY
        /* kill -9 of a worker */
        :: !wdead[0] -> printf("MSC: fault: W0 killed\n"); wdead[0] = 1; hand[0] = 0
        :: !wdead[1] -> printf("MSC: fault: W1 killed\n"); wdead[1] = 1; hand[1] = 0
        /* a worker froze past heartbeat_ttl: its heartbeat lapsed, and it goes on */
        :: !wdead[0] && hb[0] -> printf("MSC: fault: W0 heartbeat lapsed\n"); hb[0] = 0
        :: !wdead[1] && hb[1] -> printf("MSC: fault: W1 heartbeat lapsed\n"); hb[1] = 0
        /* Redis restarted without persistence: every key is gone */
        :: printf("MSC: fault: Redis lost its data\n");
           for (x_i : 0 .. MAXB + BATCH - 1) { ready[x_i] = 0 }
           for (x_i : 0 .. DCAP - 1) { done[x_i] = 0 }
           nready = 0; ndone = 0; leader = NOBODY;
           for (x_i : 0 .. NW - 1) { proc[x_i] = 0; hb[x_i] = 0; listed[x_i] = 0 };
#ifdef REDIS_CLAIM
           /* the dispatchers keep what is in flight (ScanClaim::on_redis_lost); the tasks
            * Redis lost stay in flight until their lease ends */
           skip
#endif
        fi }
    :: break /* no more faults */
    od;
    /* Nothing can move any more: every row is completed and the lists are empty. */
    timeout -> assert(EVERY_ROW(completed_row) && nready == 0 && ndone == 0)
}
