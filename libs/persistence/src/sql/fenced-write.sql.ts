/**
 * The fencing rule of leases.md ("Fencing"), in the one place it is written: every write about a
 * claimed task lands only while the claim's token is current and its lease unexpired, judged by
 * the database clock. Zero rows means the lease was lost; the caller discards its result and
 * never retries the write. The statements built here live in attempt-write.sql.ts (the writes
 * that are group-committed) and lease-write.sql.ts (the others); `TaskLeaseRepository` is their
 * only caller (pinned by test/foundation/leases/fenced-writes.test.ts).
 *
 * The lease lives in `task_leases` (docs/leases.md, "The lease table"), the task in `tasks`. A
 * write takes the lease row first, by the fence: it updates the lease row, deletes it (the task
 * ends), or only locks it, and then writes the task row in the same statement. Every writer of an
 * active task takes the lease row before the task row, so two writers of one task queue on the
 * lease row and never lock the two rows in opposite orders.
 *
 * Row by row, `$1` is the task ID and `$2` the lease token, and a write's own values follow from
 * `$3`. A batch (leases.md, "Group commit") is one JSON parameter, one object per row.
 */

/** The lease half of the fence, shared by the row-by-row and the batched form. */
export const LEASE_LIVE = 'task_leases.lease_expires_at > now()';

/** Clears the lease: the row is released to whoever claims it at its due time. */
export const CLEAR_LEASE = 'lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL';

/** No cancel request is pending on the lease row (a guard on writes a cancel overtakes). */
export const NOT_CANCELLED = 'NOT task_leases.cancel_requested';

/** One fenced write: what it does to the lease row and to the task row. */
export interface FencedWrite {
  /** The lease row's SET list; absent (and not `ends`): the lease row is only locked. */
  lease?: string;
  /** The task ends: its lease row is deleted, and its claim count carried into the task row. */
  ends?: boolean;
  /** The task row's SET list; absent: only the lease row is written. */
  task?: string;
  /** A condition on the lease row whose failure is told apart from a lost lease by the caller. */
  guard?: string;
  /**
   * Fenced by the token alone, not the expiry: what only the holder has, once its lease ran out,
   * and the renewal that keeps it ("Remote handles", "A call's end" in docs/leases.md).
   */
  tokenOnly?: boolean;
}

/** Single-row form: `WHERE` of the lease row, by `$1` and `$2`. */
function singleFence(write: FencedWrite): string {
  const live = write.tokenOnly ? '' : ` AND ${LEASE_LIVE}`;
  const guard = write.guard ? ` AND ${write.guard}` : '';
  return `task_leases.task_id = $1 AND task_leases.lease_token = $2${live}${guard}`;
}

/** The fence of a row-by-row read or write with no guard: `$1`'s lease is `$2`'s and live. */
export const LIVE_FENCE = singleFence({});

/**
 * The write as one statement returning the task ID when the fence (and guard) held, and for a
 * lease-only write the `returning` expressions over `task_leases`. The lease row is taken in a
 * CTE (`u`); the task row is written from it.
 */
export function fencedWriteSql(write: FencedWrite, returning = ''): string {
  const fence = singleFence(write);
  const extra = returning ? `, ${returning}` : '';
  if (write.task === undefined) {
    if (write.lease === undefined)
      throw new Error('fencedWriteSql: a lease-only write needs a SET list');
    return `UPDATE task_leases SET ${write.lease} WHERE ${fence}
RETURNING task_leases.task_id AS id${extra}`;
  }
  const lease = write.ends
    ? `DELETE FROM task_leases WHERE ${fence}
           RETURNING task_leases.task_id AS id, task_leases.claim_count`
    : write.lease === undefined
      ? `SELECT task_leases.task_id AS id FROM task_leases WHERE ${fence} FOR UPDATE`
      : `UPDATE task_leases SET ${write.lease} WHERE ${fence} RETURNING task_leases.task_id AS id`;
  const claims = write.ends ? ', claim_count = u.claim_count' : '';
  return `WITH u AS (${lease})
UPDATE tasks SET ${write.task}${claims} FROM u WHERE tasks.id = u.id RETURNING tasks.id`;
}

/**
 * Group commit (leases.md, "Group commit"): many claimed tasks written by ONE statement, each
 * still fenced by its own token and lease (database clock). `$1` is a JSON array of the rows'
 * values (`jsonb_to_recordset`), one object per row with `id` and `token` and the write's own
 * columns; a row missing from RETURNING failed its fence (or its guard) exactly as its
 * row-by-row write would have. The values are `u` in the lease row's statement and the CTE that
 * carries them on is `u` too, so one SET list over `u.<name>` reads them in either. Returns each
 * landed row's ID and token, and `returning`.
 */
function batchedWriteSql(write: FencedWrite, columns: string, returning = ''): string {
  const values = `jsonb_to_recordset($1::jsonb) AS u(id text, token uuid${columns ? `, ${columns}` : ''})`;
  const live = write.tokenOnly ? '' : ` AND ${LEASE_LIVE}`;
  const guard = write.guard ? ` AND ${write.guard}` : '';
  const fence = `task_leases.task_id = u.id AND task_leases.lease_token = u.token${live}${guard}`;
  // The batch's lease rows are locked first, in task ID order (`l`), whatever order the items
  // arrived in and whatever join the planner picks: thread deletion and every other writer of
  // several tasks lock lease rows in ID order too, and two statements that lock an overlapping
  // set in different orders deadlock (docs/leases.md, "The lease table"). `l` checks each fence
  // on the row's newest version as it locks it, and the lock keeps every other writer off the
  // row until the statement commits, so the write joins what `l` locked by task ID alone
  // (`taken`). Checking the fence again there cost 3.4x: with no estimate for `l`, the planner
  // walked every leased row by the leased index and scanned `l` for each (a batched terminal
  // write, 133 against 39 µs of backend CPU per row; docs/benchmarks.md, "What the profiles
  // showed").
  const locked = `l AS (SELECT u.* FROM task_leases JOIN ${values} ON ${fence}
   ORDER BY task_leases.task_id FOR UPDATE OF task_leases)`;
  const taken = 'task_leases.task_id = u.id';
  const extra = returning ? `, ${returning}` : '';
  if (write.task === undefined) {
    if (write.lease === undefined)
      throw new Error('batchedWriteSql: a lease-only write needs a SET list');
    return `WITH ${locked}
UPDATE task_leases SET ${write.lease} FROM l AS u WHERE ${taken}
RETURNING task_leases.task_id AS id, u.token::text AS token${extra}`;
  }
  const lease = write.ends
    ? `DELETE FROM task_leases USING l AS u WHERE ${taken}
           RETURNING u.*, task_leases.claim_count AS ended_claims`
    : write.lease === undefined
      ? `SELECT * FROM l`
      : `UPDATE task_leases SET ${write.lease} FROM l AS u WHERE ${taken} RETURNING u.*`;
  const claims = write.ends ? ', claim_count = u.ended_claims' : '';
  return `WITH ${locked}, u AS (${lease})
UPDATE tasks SET ${write.task}${claims} FROM u WHERE tasks.id = u.id
RETURNING tasks.id, u.token::text AS token${extra}`;
}

/**
 * A write's own values by name, each with its SQL type: in a batch they are the JSON rows'
 * columns (`u.<name>`), row by row the parameters from `$3` in this order. Every name starts
 * `new_`, `has_` or `delay_`, so none can mean a task or lease column.
 */
export type WriteColumns<C extends string> = Readonly<Record<C, string>>;

/**
 * A write that is sent either way (docs/leases.md, "Group commit"): alone as `single`, or
 * grouped as `batched`, both built from one description over the same named values, so the two
 * cannot drift apart. Which one a repository sends is decided when it is built.
 */
export interface FencedStatement<C extends string> {
  /** The value names in `single`'s parameter order (`$3…`). */
  columns: readonly C[];
  single: string;
  batched: string;
}

/** Both forms of `write`, its values referenced through the reference `write` is given. */
export function fencedStatement<C extends string>(
  columns: WriteColumns<C>,
  write: (value: Readonly<Record<C, string>>) => FencedWrite,
  returning = '',
): FencedStatement<C> {
  const names = Object.keys(columns) as C[];
  const recordset = names.map((name) => `${name} ${columns[name]}`).join(', ');
  return {
    columns: names,
    single: fencedWriteSql(write(parameterRefs(columns)), returning),
    batched: batchedWriteSql(write(columnRefs(names)), recordset, returning),
  };
}

/** Each value as the parameter row by row: `($n::type)`, numbered from `$3` in key order. */
export function parameterRefs<C extends string>(columns: WriteColumns<C>): Record<C, string> {
  const names = Object.keys(columns) as C[];
  return Object.fromEntries(
    names.map((name, i) => [name, `($${i + 3}::${columns[name]})`]),
  ) as Record<C, string>;
}

function columnRefs<C extends string>(names: readonly C[]): Record<C, string> {
  return Object.fromEntries(names.map((name) => [name, `u.${name}`])) as Record<C, string>;
}

/** `now() + ms` (an SQL expression) for the lease row, or now when a cancel is pending. */
export function delayUnlessCancelled(ms: string): string {
  return `CASE WHEN task_leases.cancel_requested THEN now()
    ELSE now() + make_interval(secs => ${ms} / 1000) END`;
}
