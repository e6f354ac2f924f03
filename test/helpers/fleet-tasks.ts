import { newTaskId } from '@app/common';
import { Queryable } from '@app/persistence';
import { waitUntil } from './wait';

/** A task row to insert for fleet tests: its toolset binding and its upstream arguments. */
export interface FleetTaskSeed {
  toolset: string;
  server: string;
  contract?: 'ordinary' | 'mcp-tasks' | 'sync-call';
  /** The submitting user (default `user-1`). */
  userId?: string;
  /** The consumer's arguments (demo job args: duration_ms, tag, fault, ...). */
  input: Record<string, unknown>;
}

/** Inserts one queued, due-now task per seed in one statement; returns their IDs in order. */
export async function insertFleetTasks(db: Queryable, seeds: FleetTaskSeed[]): Promise<string[]> {
  const ids = seeds.map(() => newTaskId());
  await db.query(
    `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input)
     SELECT id, user_id, 'thread-1', toolset, contract, server, 'queued', input
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::text[])
            AS t(id, toolset, contract, server, input, user_id)`,
    [
      ids,
      seeds.map((s) => s.toolset),
      seeds.map((s) => s.contract ?? 'ordinary'),
      seeds.map((s) => s.server),
      seeds.map((s) => JSON.stringify(s.input)),
      seeds.map((s) => s.userId ?? 'user-1'),
    ],
  );
  return ids;
}

/** The columns fleet tests assert on. */
export interface TaskState {
  id: string;
  status: string;
  error_code: string | null;
  error_message: string | null;
  last_error: string | null;
  consecutive_errors: number;
  remote_task_id: string | null;
  submit_attempts: number;
  claim_count: number;
  lease_owner: string | null;
  input: Record<string, unknown>;
  completed_at: Date | null;
}

/** Current state of the given tasks, keyed by ID. */
export async function taskStates(db: Queryable, ids: string[]): Promise<Map<string, TaskState>> {
  const rows = await db.query<TaskState>(
    `SELECT id, status, error_code, error_message, last_error, consecutive_errors, remote_task_id,
            submit_attempts, claim_count, lease_owner, input, completed_at
       FROM task_rows WHERE id = ANY($1::text[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row]));
}

/** How many of `ids` are terminal. */
export async function countTerminal(db: Queryable, ids: string[]): Promise<number> {
  const rows = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM tasks
      WHERE id = ANY($1::text[]) AND status IN ('completed', 'failed', 'cancelled')`,
    [ids],
  );
  return Number(rows[0].n);
}

/** Per-tag submit counts as the demo server reports them (demo_stats `by_tag`). */
export type SubmitCounts = Record<string, { submits: number } | undefined>;

/**
 * Invariant 5 for tasks whose input carries a unique `tag`: each was submitted upstream at most
 * once; a `completed` task exactly once; a task that was submitted but has no stored handle
 * ended `failed`/`outcome_uncertain`. Returns human-readable violations (empty when all hold).
 */
export async function submitViolations(
  db: Queryable,
  ids: string[],
  byTag: SubmitCounts,
): Promise<string[]> {
  const problems: string[] = [];
  for (const task of (await taskStates(db, ids)).values()) {
    const tag = String(task.input.tag);
    const submits = byTag[tag]?.submits ?? 0;
    if (submits > 1) problems.push(`${tag}: submitted ${submits} times`);
    if (task.status === 'completed' && submits !== 1) {
      problems.push(`${tag}: completed with ${submits} submits`);
    }
    if (task.status === 'failed' && task.error_code !== 'outcome_uncertain') {
      problems.push(`${tag}: failed with ${task.error_code}: ${task.error_message}`);
    }
    if (submits === 1 && task.remote_task_id === null && task.status !== 'failed') {
      problems.push(`${tag}: submitted, no handle stored, yet ${task.status}`);
    }
  }
  return problems;
}

/**
 * Seconds until the task is due again (database clock), or null while it is claimed or has no
 * lease row: after a poll, how long the poller chose to wait (a covered task's safety poll, say).
 */
export async function dueInSeconds(db: Queryable, id: string): Promise<number | null> {
  const rows = await db.query<{ s: number | null }>(
    `SELECT extract(epoch FROM next_attempt_at - now())::float8 AS s
       FROM task_leases WHERE task_id = $1 AND lease_token IS NULL`,
    [id],
  );
  return rows[0]?.s ?? null;
}

/** Waits until `count` toolsets are available (published by a poller's catalog). */
export async function waitToolsetsAvailable(db: Queryable, count: number): Promise<void> {
  await waitUntil(async () => {
    const rows = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM toolsets WHERE available`,
    );
    return rows[0].n === count ? true : undefined;
  }, `${count} toolsets available`);
}

/** Waits until every one of `ids` is terminal; `what` names the wait in a timeout's message. */
export async function waitAllTerminal(
  db: Queryable,
  ids: string[],
  what = 'all tasks terminal',
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<void> {
  await waitUntil(
    async () => ((await countTerminal(db, ids)) === ids.length ? true : undefined),
    what,
    timeoutMs,
    intervalMs,
  );
}

/**
 * Waits until no poller runs a statement on this database: after freezing one (SIGSTOP), what it
 * holds is then settled, not half written.
 */
export async function waitNoPollerStatement(db: Queryable): Promise<void> {
  await waitUntil(async () => {
    const running = await db.query(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
          AND application_name LIKE 'mcp-task-gateway-poller%' AND state <> 'idle'`,
    );
    return running.length === 0 ? true : undefined;
  }, 'the frozen poller to have no statement running');
}

/** Waits until the task's submit (or held call) is marked started: the call is going out. */
export async function waitSubmitStarted(db: Queryable, id: string): Promise<void> {
  await waitUntil(async () => {
    const rows = await db.query(
      `SELECT 1 FROM tasks WHERE id = $1 AND submit_started_at IS NOT NULL`,
      [id],
    );
    return rows.length > 0 ? true : undefined;
  }, 'the call to be sent');
}

/**
 * Waits until the demo server has received the call tagged `tag`: it is on the wire. A stored
 * start mark is not that yet: a held call writes its working mark between the two.
 */
export async function waitCallReceived(
  demo: { stats(tag?: string): Promise<{ by_tag: SubmitCounts }> },
  tag: string,
): Promise<void> {
  await waitUntil(
    async () => (((await demo.stats(tag)).by_tag[tag]?.submits ?? 0) > 0 ? true : undefined),
    'the call to reach the upstream',
  );
}

/** How a task ended: its status, error code and claim count, once it has ended. */
export async function waitTaskEnd(
  db: Queryable,
  id: string,
  timeoutMs = 60_000,
): Promise<{ status: string; error_code: string | null; claim_count: number }> {
  return waitUntil(
    async () => {
      const rows = await db.query<{
        status: string;
        error_code: string | null;
        claim_count: number;
      }>(
        `SELECT status, error_code, claim_count FROM task_rows
          WHERE id = $1 AND status IN ('completed', 'failed', 'cancelled')`,
        [id],
      );
      return rows[0];
    },
    'the task to end',
    timeoutMs,
  );
}
