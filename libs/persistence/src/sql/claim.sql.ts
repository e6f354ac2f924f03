/**
 * The claim: one statement picks the due rows of `task_leases` in due order (CLAIM_SQL,
 * CLAIM_FAIR_SHARE=false) and leases them. The fair-share claim (fair-claim.sql.ts) is built from
 * the parts exported here, and the notes here hold for both. Index: `task_leases_due_idx`
 * (next_attempt_at) WHERE lease_token IS NULL for the ordinary scan, `task_leases_leased_idx`
 * for the rescues.
 *
 * - Only the narrow lease row is written (docs/leases.md, "The lease table"): its due index holds
 *   the rows without a lease and its leased index the rows with one, so a claim moves each row
 *   from one partial index to the other and never touches the wide `tasks` row. The caller reads
 *   the claimed tasks afterwards, in a statement of its own (TASK_ROWS_BY_ID_SQL), so it sees
 *   every write that committed before the claim took the rows' locks.
 *
 * - `LIMIT $2` is the caller's number of free slots: claim only what can start now.
 * - `FOR UPDATE SKIP LOCKED` lets concurrent claimers pass over each other's rows instead of
 *   queueing on them; the CTE locks, the UPDATE leases in the same statement.
 * - `next_attempt_at = now() + lease`: a lease that expires is simply due again, so this same
 *   statement is the recovery path and there is no sweeper.
 * - Every time comes from the database clock (`now()`), never a pod's.
 * - Rows pinned to a worker (stdio native tasks) go to that worker while it is alive, and to
 *   anyone once it is dead by the rule of worker-liveness.sql.ts ($5 is the dead-after window in
 *   ms): silent a window, and still silent a window after a live worker suspected it; judged only
 *   by a claimer a window into its own unbroken run of heartbeats, a window after the server
 *   started. Each part was found by a chaos run ending a live worker's stdio task
 *   `upstream_task_lost` after a Postgres restart or failover.
 * - Rescues first (leases.md, "Rescues first"): rows whose lease expired (a crashed or stalled
 *   worker's claims) are locked before any other due row, from `task_leases_leased_idx` (only the
 *   rows holding a lease, a few per slot of the fleet), and the ordinary scan fills what room is
 *   left with the rows holding no live-or-expired lease. Without it a rescued row waits behind
 *   every older overdue row, which on a survivor that is behind is longer than the poll
 *   interval that invariant 3 allows after the expiry.
 * - The phase filter ($3) is evaluated on the rows the partial index yields; the CTE returns
 *   the previous due time and lease so the caller can record due lag and rescues.
 * - `$6` lists servers whose per-worker `maxConcurrentCalls` is used up on this worker. Skipping
 *   them here, instead of claiming and giving rows back, leaves a hung server's rows to workers
 *   with room for them: a hung server fills only its own slots (leases.md, invariant 7).
 * - `$7`/`$8` give each configured server's free room on this worker. The locked candidates are
 *   ranked per server and only the first `room` of each are leased; the others stay due, their
 *   row locks end with the statement. Without this bound a claim of 16 could take 16 rows of a
 *   server with 1 free slot and give 15 back (counted as started, due again 100 ms later). The
 *   window function cannot sit in the locking SELECT (Postgres forbids FOR UPDATE with window
 *   functions), hence the second CTE. A server absent from `$7` is bounded by `$2` alone. For a
 *   server with `fleetMaxConcurrentCalls` the caller has already cut its room to the fleet's
 *   (fleet-cap.sql.ts), so the statement itself knows nothing of fleet caps.
 *
 * Measured (npm run bench, docs/benchmarks.md): a 50-row claim costs p99 17.7 ms with 1M rows in
 * the table and 19.3 ms with 10k (terminal rows are not in the index). With 20k rows due, JIT
 * compiled this statement for 97 of 243 ms; the apps' connections run with jit=off. Rewriting the
 * pinned-worker NOT EXISTS as `<> ALL (ARRAY(...))` cut the planner's estimate but not the
 * burn-down rate (3,640 vs 3,710 rows/s), so the plainer form stays.
 */
import { mayJudge, notDead } from './worker-liveness.sql';

/** The phase a due row is claimed for. */
export const PHASE = `CASE
           WHEN t.cancel_requested THEN 'cancel'
           WHEN t.queued THEN 'submit'
           ELSE 'poll'
         END`;

/**
 * The phase filter: the row's phase is one of those asked for ($3). Written as one comparison per
 * phase, each of a constant with the parameter, so that when Postgres plans the statement for
 * its parameters (every poller asks for all three phases) the filter folds to the two flags it
 * reads, which its statistics estimate. As `(PHASE) = ANY($3)` the planner guessed that
 * almost no row passes, took each principal's prefix in the fair-share claim by reading all of
 * its due rows and sorting them instead of walking the index to the few it needs, and a
 * burn-down of 20,000 rows by 500-row fair-share claims took 893 ms against 648 ms this way
 * (due order: 462 against 432 ms; docs/benchmarks.md, "What the profiles showed").
 */
const PHASE_ASKED = `(CASE WHEN t.cancel_requested THEN 'cancel'::text = ANY($3::text[])
           WHEN t.queued THEN 'submit'::text = ANY($3::text[])
           ELSE 'poll'::text = ANY($3::text[]) END)`;

/**
 * Which due rows this worker may take: the phases asked for ($3), no server without room ($6),
 * and the pinned-worker rule.
 */
const CLAIMABLE = `NOT (t.server = ANY($6::text[]))
     AND ${PHASE_ASKED}
     AND (t.pinned_worker_id IS NULL
          OR t.pinned_worker_id = $1
          OR (NOT EXISTS (SELECT 1 FROM workers w
                           WHERE w.id = t.pinned_worker_id AND ${notDead('w', '$5')})
              AND ${mayJudge('$1', '$5')}))`;

/**
 * A row whose lease expired: its worker died or stalled, and the row is due again. `$10` is the
 * least time since the expiry, in ms: 0 but in the hold after a database outage, when a lease
 * that ran out while this worker could not reach the database waits for its holder to renew it
 * (docs/leases.md, "Rescues after an outage").
 */
const EXPIRED_LEASE = `(t.lease_token IS NOT NULL
     AND t.lease_expires_at <= now() - make_interval(secs => $10::float8 / 1000))`;

/**
 * The rows of the ordinary scan (not the rescues): holding no lease, due now, and claimable.
 * Read from the due index (`task_leases_due_idx`, the rows without a lease) in `next_attempt_at`
 * order, as every use orders them.
 */
export const DUE_NOT_RESCUED = `t.lease_token IS NULL
     AND t.next_attempt_at <= now()
     AND ${CLAIMABLE}`;

/**
 * The rescues, locked first and oldest expiry first: every row whose lease expired (a leased
 * row is due at its lease's end), but for the leases this process still holds ($9: a held call
 * or a call's end outlasting its lease in an outage goes on under its own token; docs/leases.md,
 * "A call's end"). The scan reads `task_leases_leased_idx` (rows holding a lease, expired or
 * not), never the backlog.
 */
export const RESCUES = `rescues AS (
  SELECT t.task_id AS id,
         t.server,
         t.lease_expires_at AS due_at,
         true AS rescued,
         ${PHASE} AS phase
    FROM task_leases t
   WHERE ${EXPIRED_LEASE}
     AND t.lease_token <> ALL($9::uuid[])
     AND ${CLAIMABLE}
   ORDER BY t.lease_expires_at
   LIMIT $2
   FOR UPDATE OF t SKIP LOCKED
)`;

/** The room the rescues left in this claim: the ordinary scan's LIMIT. */
export const ROOM_AFTER_RESCUES = `($2 - (SELECT count(*) FROM rescues))`;

/**
 * The per-server bound on the locked candidates: at most the server's room ($7/$8: this worker's
 * free slots, or the fleet's room when that is smaller); a server absent from `$7` is bounded by
 * `$2` alone. `order` ranks a server's candidates.
 */
export function roomBound(order: string): string {
  return `due AS (
  SELECT ranked.*
    FROM (SELECT c.*, row_number() OVER (PARTITION BY c.server ORDER BY ${order}) AS nth
            FROM candidates c) ranked
    LEFT JOIN unnest($7::text[], $8::int[]) AS room(server, free) ON room.server = ranked.server
   WHERE ranked.nth <= coalesce(room.free, $2)
)`;
}

/**
 * Leases the chosen rows and returns what the claim knows of each: the lease, the phase, the
 * previous due time, whether it was a rescue and the claim's number on the row. The wide rows
 * are read by the caller next, with every answer stored so far, so `answers_waiting` (answers
 * that came while a lease was held) starts over.
 */
export const LEASE_AND_RETURN = `UPDATE task_leases t
   SET lease_owner      = $1,
       lease_token      = gen_random_uuid(),
       lease_expires_at = now() + make_interval(secs => $4::float8 / 1000),
       next_attempt_at  = now() + make_interval(secs => $4::float8 / 1000),
       claim_count      = t.claim_count + 1,
       answers_waiting  = false
  FROM due
 WHERE t.task_id = due.id
RETURNING t.task_id AS id, t.lease_owner, t.lease_token, t.lease_expires_at, due.phase, due.due_at,
          due.rescued, t.claim_count,
          extract(epoch FROM now() - due.due_at) AS due_lag_seconds,
          now() AS db_now`;

/** The claim in due order alone (CLAIM_FAIR_SHARE=false), after the rescues. */
export const CLAIM_SQL = `
WITH ${RESCUES},
overdue AS (
  SELECT t.task_id AS id,
         t.server,
         t.next_attempt_at AS due_at,
         false AS rescued,
         ${PHASE} AS phase
    FROM task_leases t
   WHERE ${DUE_NOT_RESCUED}
   ORDER BY t.next_attempt_at
   LIMIT ${ROOM_AFTER_RESCUES}
   FOR UPDATE OF t SKIP LOCKED
),
candidates AS (
  SELECT * FROM rescues
  UNION ALL
  SELECT * FROM overdue
),
${roomBound('c.rescued DESC, c.due_at')}
${LEASE_AND_RETURN}`;

/**
 * The claimed tasks as the attempt reads them (`task_rows`: the task with its lease columns),
 * read by ID right after the claim. A statement of its own, so its snapshot is taken after the
 * claim took the lease rows' locks: a write to a task (a cancel, an answer) that committed before
 * that is seen, and any later one waits for this worker's lease and is seen by its next write,
 * as with a claim of the wide row itself.
 */
export const TASK_ROWS_BY_ID_SQL = `SELECT * FROM task_rows WHERE id = ANY($1::text[])`;
