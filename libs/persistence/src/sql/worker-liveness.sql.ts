/**
 * When one worker may judge another dead (docs/leases.md, "Workers"), in the one place it is
 * written: the claim's pinned-row rule (claim.sql.ts) and the catalog sweep (catalog-sweep.sql.ts)
 * build their conditions from here, and the heartbeat (worker.repository.ts) keeps the columns
 * these read. Every time is the database clock; the dead-after window is a parameter of the
 * statement (in ms), given by the caller's SQL text as `window`.
 *
 * - A worker is dead when its row is gone, marked stopped, or silent twice over: its heartbeat is
 *   older than the window, and a live worker marked it suspected (`suspected_at`) at least a
 *   window ago and it has not beaten since. A live worker that reached the database saw it silent
 *   at the mark, so a whole window after it the silence is the worker's own, not an outage's:
 *   after a database outage shorter than the streak's break (below), the owner whose last beat
 *   fell early in its interval is stale by more than the window while the judge's run of
 *   heartbeats is unbroken (the failover chaos run, seed 3, ended a live worker's stdio task so).
 * - The judge itself must be live, a window into an unbroken run of heartbeats (`alive_since`)
 *   whose last beat is at most the break old, and the database must have been up a window
 *   (`pg_postmaster_start_time()`): right after an outage every heartbeat is stale.
 */

/**
 * A run of heartbeats is broken by a gap longer than this share of the dead-after window: two
 * heartbeat intervals of the three that make the window (more than one late tick).
 */
export const STREAK_BREAK_SHARE = 2 / 3;

/** `now()` less a share of the window given in ms by the SQL expression `window`. */
function ago(window: string, share = 1): string {
  const ms = share === 1 ? `${window}::float8` : `${window}::float8 * ${share}`;
  return `now() - make_interval(secs => ${ms} / 1000)`;
}

/** The worker `w` (a row alias) has beaten within the window. */
export function beatWithin(w: string, window: string): string {
  return `${w}.heartbeat_at > ${ago(window)}`;
}

/**
 * The worker `w` is not judged dead: not stopped, and either beating within the window or not yet
 * silent a whole window past a live worker's suspicion.
 */
export function notDead(w: string, window: string): string {
  return `${w}.stopped_at IS NULL
      AND (${beatWithin(w, window)}
           OR ${w}.suspected_at IS NULL
           OR ${w}.suspected_at <= ${w}.heartbeat_at
           OR ${w}.suspected_at > ${ago(window)})`;
}

/** The worker whose ID is the SQL expression `id` may judge others dead now. */
export function mayJudge(id: string, window: string): string {
  return `EXISTS (SELECT 1 FROM workers me
                   WHERE me.id = ${id} AND me.stopped_at IS NULL
                     AND me.alive_since < ${ago(window)}
                     AND me.heartbeat_at > ${ago(window, STREAK_BREAK_SHARE)})
      AND pg_postmaster_start_time() < ${ago(window)}`;
}

/**
 * The heartbeat of worker `$1`, `$2` the window: a beat later than the break after the previous
 * one starts a new run. Returns the row's ID (none: the row is gone or marked stopped).
 */
export const HEARTBEAT_SQL = `UPDATE workers
    SET alive_since = CASE WHEN heartbeat_at < ${ago('$2', STREAK_BREAK_SHARE)} THEN now()
                           ELSE alive_since END,
        heartbeat_at = now()
  WHERE id = $1 AND stopped_at IS NULL
RETURNING id`;

/**
 * Run by a worker right after its own heartbeat landed (`$1` its ID, `$2` the window): marks every
 * other running worker silent past the window as suspected, unless it already is since its last
 * beat. A statement of its own, skipping locked rows: a worker beating at the same moment holds
 * its row, is not silent, and two workers back from an outage never wait on each other's rows.
 */
export const SUSPECT_SILENT_SQL = `UPDATE workers o SET suspected_at = now()
  WHERE o.id IN (SELECT w.id FROM workers w
                  WHERE w.id <> $1 AND w.stopped_at IS NULL
                    AND NOT ${beatWithin('w', '$2')}
                    AND (w.suspected_at IS NULL OR w.suspected_at <= w.heartbeat_at)
                    FOR UPDATE SKIP LOCKED)`;
