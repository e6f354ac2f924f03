/**
 * The fair-share claim (docs/leases.md, "Fair share"; CLAIM_FAIR_SHARE, on by default): the due
 * rows leased in rank order across principals instead of due order. Built from the due-order
 * claim's parts (claim.sql.ts: the rescues, the claimable rows, the per-server room, the lease
 * and its answer), whose notes hold here too.
 *
 * Indexes: `task_leases_principal_due_idx` (principal, next_attempt_at) WHERE lease_token IS NULL
 * for the walk of the principals and each principal's prefix; `task_leases_leased_idx` for the
 * live leases per principal and the rescues; `task_leases_due_idx` for the plain due-order prefix
 * of the pool (migrations/…-LeaseTable).
 *
 * Measured (docs/benchmarks.md, "What the profiles showed"): `EXPLAIN ANALYZE` of a claim of 500
 * over 20,000 due rows of 100 principals spent 11.6 of 24 ms taking each principal's prefix by a
 * bitmap scan of all its due rows and a sort, until the phase filter was written so the planner
 * could estimate it (`PHASE_ASKED`); since, the prefix is an index walk, and 40 claims of 500 took
 * 648 ms against 893 ms. What is left is the walk of the principals, the live-lease count per
 * principal and the ranking's sorts: the burn-down runs at 0.84–0.89× the due-order claim
 * (bench/lease-engine.bench.ts), and a claim of 50 costs p99 9.6 ms with 1M rows in the table
 * against 8.8 ms with 10k (bench/claim-growth.bench.ts). With 40,000 rows due it ran at about 0.8×
 * the due-order claim: `overdue`'s join of the best-ranked rows is planned as a hash join over a
 * scan of the whole table (docs/benchmarks.md, "The fair claim at a larger backlog: 0.8× the
 * due-order claim", with a fix that was tried and why it was not kept).
 */
import {
  DUE_NOT_RESCUED,
  LEASE_AND_RETURN,
  PHASE,
  RESCUES,
  ROOM_AFTER_RESCUES,
  roomBound,
} from './claim.sql';

/**
 * The fair-share claim (docs/leases.md, "Fair share"). A principal is `coalesce(tenant, user_id)`.
 *
 * - `principals`: every principal with rows waiting for a claim, by a loose index scan of
 *   `task_leases_principal_due_idx` (one index probe per principal, however many rows each
 *   has), with its weight ($11/$12; 1 when not listed). `task_leases.principal` is that
 *   coalesce, stored when the task is inserted.
 * - `pool`: a prefix of each principal's claimable due rows in due order: its first
 *   `2 × $2 × weight / Σweight + 4`, rounded up (its share of this claim twice over and four
 *   more, from the same index under LATERAL), together with the first `$2` due rows of all
 *   principals (the due-order claim's scan, which keeps the claim work-conserving when a
 *   principal has fewer rows than its share). Both are prefixes of a principal's due order, so
 *   their union is too. The spare rows serve concurrent claimers: one that finds the best-ranked
 *   rows locked takes the next ones by rank, and still in proportion (with twice the share, 3:1
 *   drifted to 3.2:1 with four claimers).
 * - `ranked`: each row ranked `(held + nth) / weight`: `held` is the principal's live leases
 *   fleet-wide, `nth` the row's place in the principal's due order. Ties go to the principal with
 *   fewer rows in the pool, then to the older due time.
 * - `best`, then `overdue`: of the best `2 × $2` by rank, as many as the rescues left room for
 *   (`$2` less the rescues), locked `SKIP LOCKED` in rank order. The row must still be due: a
 *   row another claimer leased meanwhile is due only when that lease ends, and Postgres
 *   re-checks this condition on the row's newest version when it takes the lock (as in
 *   CLAIM_SQL). Not `next_attempt_at = pool.due_at`: with many rows of one due time the
 *   planner probed the due index for it, once per candidate.
 * - `candidates`, the headroom (docs/leases.md, "Fair share"): of the locked rows, in rank
 *   order after the rescues, the first `$13` (the caller's free slots less
 *   FAIR_SHARE_HEADROOM) go to anyone; a later one only when its rank is below the `leader`
 *   level, the highest `held / weight` of the fleet, so that its principal is still below the
 *   leader with the row. Rescues always. Under a flood every slot is otherwise busy and a quiet
 *   principal's task waits for one to free, which no ranking shortens; the last slots of each
 *   worker stay free for it instead. When one principal is all there is (among those with rows
 *   waiting and those with live leases) the level is infinite and every row open: a lone
 *   principal's flood still fills every slot. `$13` null: every row open, the claim as before.
 *   The place is counted among the rows this claim locked, not in `overdue`'s subquery before
 *   the lock: there a best-ranked row that a concurrent claim holds used up an open place, and
 *   the claim came back short with the leader's next rows free (test/fairness/headroom.test.ts).
 *   A locked row left out here stays due, its lock ending with the statement, as `due` does with
 *   a server's.
 *
 * - `contended` (the answer's last column; one row of nulls beside it when nothing was leased):
 *   the claim locked fewer rows than its room while rows of `best` were left unlocked, so a
 *   concurrent claim held them (`SKIP LOCKED`, or Postgres's re-check after that claim's lease
 *   committed). The ranking is a window, not a walk of the whole backlog as the due-order claim's
 *   scan is: a small claim beside a larger one ranks the rows the larger one holds and can come
 *   back empty with rows still due behind them. Told so, the engine claims again once the claim
 *   gap has passed and the larger claim has committed, instead of waiting for its next wake-up
 *   (docs/leases.md, "Fair share", Concurrent claimers). Rows the headroom or a server's room
 *   left out were locked by this claim, so they never set it: no claim loop under a flood.
 *
 * Work-conserving: a principal without due rows takes no place in the ranking, so the others
 * fill every free slot but the headroom. Within a principal, rows go in due order as before.
 *
 * The rescues come before all of this (leases.md, "Rescues first"): they are locked first, the
 * pool leaves them out, and the ranked rows fill the room they left.
 */
export const FAIR_CLAIM_SQL = `
WITH RECURSIVE ${RESCUES},
walk AS (
  (SELECT t.principal
     FROM task_leases t
    WHERE t.lease_token IS NULL
    ORDER BY t.principal
    LIMIT 1)
  UNION ALL
  SELECT (SELECT t.principal
            FROM task_leases t
           WHERE t.lease_token IS NULL
             AND t.principal > walk.principal
           ORDER BY t.principal
           LIMIT 1)
    FROM walk
   WHERE walk.principal IS NOT NULL
),
principals AS (
  SELECT walk.principal, coalesce(w.weight, 1) AS weight
    FROM walk
    LEFT JOIN unnest($11::text[], $12::float8[]) AS w(principal, weight)
           ON w.principal = walk.principal
   WHERE walk.principal IS NOT NULL
),
held AS (
  SELECT l.principal, count(*)::float8 AS n
    FROM task_leases l
   WHERE l.lease_token IS NOT NULL AND l.lease_expires_at > now()
   GROUP BY 1
),
pool AS (
  SELECT c.id, c.principal, c.due_at
    FROM principals p
   CROSS JOIN (SELECT sum(weight) AS total FROM principals) s
   CROSS JOIN LATERAL (
          SELECT t.task_id AS id, p.principal, t.next_attempt_at AS due_at
            FROM task_leases t
           WHERE t.principal = p.principal
             AND ${DUE_NOT_RESCUED}
           ORDER BY t.next_attempt_at
           LIMIT ceil(2 * $2 * p.weight / s.total)::int + 4) c
  UNION
  (SELECT t.task_id, t.principal, t.next_attempt_at
     FROM task_leases t
    WHERE ${DUE_NOT_RESCUED}
    ORDER BY t.next_attempt_at
    LIMIT $2)
),
ranked AS (
  SELECT pool.id,
         pool.due_at,
         (coalesce(h.n, 0) + row_number() OVER (PARTITION BY pool.principal ORDER BY pool.due_at))
           / p.weight AS rank,
         count(*) OVER (PARTITION BY pool.principal) AS backlog
    FROM pool
    JOIN principals p ON p.principal = pool.principal
    LEFT JOIN held h ON h.principal = pool.principal
),
best AS (
  SELECT * FROM ranked ORDER BY rank, backlog, due_at LIMIT 2 * $2
),
overdue AS (
  SELECT t.task_id AS id,
         t.server,
         t.next_attempt_at AS due_at,
         false AS rescued,
         ${PHASE} AS phase,
         r.rank,
         r.backlog
    FROM best r
    JOIN task_leases t ON t.task_id = r.id
   WHERE t.lease_token IS NULL
     AND t.next_attempt_at <= now()
   ORDER BY r.rank, r.backlog, r.due_at
   LIMIT ${ROOM_AFTER_RESCUES}
   FOR UPDATE OF t SKIP LOCKED
),
locked AS (
  SELECT rescues.*, 0::float8 AS rank, 0::bigint AS backlog FROM rescues
  UNION ALL
  SELECT * FROM overdue
),
leader AS (
  SELECT CASE
           WHEN (SELECT count(*)
                   FROM (SELECT principal FROM principals UNION SELECT principal FROM held) a) <= 1
           THEN 'Infinity'::float8
           ELSE coalesce(max(h.n / coalesce(w.weight, 1)), 0)
         END AS level
    FROM held h
    LEFT JOIN unnest($11::text[], $12::float8[]) AS w(principal, weight)
           ON w.principal = h.principal
),
candidates AS (
  SELECT l.*
    FROM (SELECT locked.*,
                 row_number() OVER (ORDER BY rescued DESC, rank, backlog, due_at) AS place
            FROM locked) l
   WHERE $13::int IS NULL
      OR l.rescued
      OR l.place <= $13::int
      OR l.rank < (SELECT level FROM leader)
),
${roomBound('c.rescued DESC, c.rank, c.backlog, c.due_at')},
leased AS (
${LEASE_AND_RETURN}
)
SELECT leased.*, state.contended
  FROM (SELECT (SELECT count(*) FROM overdue) < ${ROOM_AFTER_RESCUES}
               AND (SELECT count(*) FROM best) > (SELECT count(*) FROM overdue) AS contended) state
  LEFT JOIN leased ON true`;
