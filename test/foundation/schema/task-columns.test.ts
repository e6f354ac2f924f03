// Guards the one description of a task row (TASK_COLUMNS in libs/persistence/src/task-row.ts)
// against drift: it must match the migrated `task_rows` view (the task with its lease columns)
// column by column, every other column must be one the code never reads, and the event outbox
// trigger's snapshot must hold every column the event projections read, so an event shows what
// the API's GET of the same task shows.
import { TaskErrorCode, TaskStatus } from '@app/common';
import { TASK_COLUMNS, TaskRow, taskColumnName, toTaskRow } from '@app/persistence';
import { taskRowFromSnapshot, toTaskSummary } from '@app/views';
import { legacyTask } from '../../../apps/api/src/front-door/mcp-task.view';
import { useTestDatabase } from '../../helpers/db';
import { insertTasks } from '../../helpers/tasks';

/** Columns the code never reads into a TaskRow; adding a column means deciding which it is. */
const NOT_READ = [
  'claim_count', // written and read by the claim's SQL only
  'lease_token', // the fence: read by the claim into ClaimedTask.lease
  'thread_deleted_at', // only filters in SQL
  'progress_event_at', // the progress-event rate limit of the trigger
  'tenant', // the fair-share principal, used by the claim's SQL only
];

const t = useTestDatabase();

it('TASK_COLUMNS matches the migrated task_rows view: names, types, nullability', async () => {
  // A view reports every column nullable: a task's own columns are as `tasks` has them, and the
  // lease row's are null once the task has ended (the view's outer join).
  const rows = await t.db.query<{ name: string; type: string; nullable: boolean }>(
    `SELECT v.column_name AS name, v.data_type AS type,
            coalesce(c.is_nullable = 'YES', true) AS nullable
       FROM information_schema.columns v
       LEFT JOIN information_schema.columns c
              ON c.table_schema = v.table_schema AND c.table_name = 'tasks'
             AND c.column_name = v.column_name
      WHERE v.table_schema = current_schema() AND v.table_name = 'task_rows'`,
  );
  const table = new Map(rows.map((r) => [r.name, { type: r.type, nullable: r.nullable }]));
  const described = new Map(
    Object.entries(TASK_COLUMNS).map(([field, c]) => [
      taskColumnName(field),
      { type: c.type, nullable: c.nullable },
    ]),
  );
  for (const [name, shape] of described)
    expect({ name, ...table.get(name) }).toEqual({ name, ...shape });
  const unread = [...table.keys()].filter((name) => !described.has(name)).sort();
  expect(unread).toEqual([...NOT_READ].sort());
});

/**
 * The `'key', n.column` (the task) and `'key', l.column` (its lease row) pairs of the snapshot
 * the outbox trigger stores in `task_events.task`.
 */
async function snapshotColumns(): Promise<string[]> {
  const [{ body }] = await t.db.query<{ body: string }>(
    `SELECT pg_get_functiondef('tasks_after_update'::regproc) AS body`,
  );
  // The copy runs from its first jsonb_build_object to the event's `data`, which follows it.
  const start = body.indexOf('jsonb_build_object(');
  const end = body.indexOf("'previous_status'", start);
  expect(end).toBeGreaterThan(start);
  const pairs = [...body.slice(start, end).matchAll(/'(\w+)',\s*[nl]\.(\w+)/g)];
  expect(pairs.length).toBeGreaterThan(0);
  for (const [, key, column] of pairs) expect(key).toBe(column);
  return pairs.map(([, key]) => key);
}

/** A row with every field set, recording which fields a projection reads. */
function recordingRow(status: TaskStatus, read: Set<string>): TaskRow {
  const row: Record<string, unknown> = {};
  for (const [field, c] of Object.entries(TASK_COLUMNS)) {
    row[field] =
      c.type === 'timestamp with time zone'
        ? new Date()
        : c.type === 'integer'
          ? 1
          : c.type === 'boolean'
            ? true
            : c.type === 'jsonb'
              ? { message: 'm' }
              : `value-of-${field}`;
  }
  Object.assign(row, { status, errorCode: TaskErrorCode.UpstreamFailed, errorMessage: 'broke' });
  return new Proxy(row, {
    get(target, field: string) {
      read.add(field);
      return target[field];
    },
  }) as TaskRow;
}

it('the event snapshot holds every column the event projections read', async () => {
  const snapshot = new Set(await snapshotColumns());
  for (const name of snapshot)
    expect(Object.keys(TASK_COLUMNS).map(taskColumnName)).toContain(name);
  const read = new Set<string>();
  for (const status of Object.values(TaskStatus)) {
    // Webhooks and the events API (libs/webhooks), and the MCP status notification (apps/api).
    toTaskSummary(recordingRow(status, read), { trackingDegradedAfter: 3 });
    toTaskSummary(recordingRow(status, read), { trackingDegradedAfter: 3, unavailableReason: 'x' });
    legacyTask(recordingRow(status, read), { ttlMs: 1, pollIntervalMs: 1 });
  }
  const missing = [...read].map(taskColumnName).filter((name) => !snapshot.has(name));
  expect(missing).toEqual([]);
});

it("an event's summary equals the live row's, upstream text scrubbed alike", async () => {
  const [id] = await insertTasks(t.db, 1, { server: 'billing-east', status: 'working' });
  await t.db.query(
    `UPDATE tasks SET remote_task_id = 'job77', status = 'failed', error_code = 'upstream_failed',
            error_message = 'server "billing-east" answered error -1: billing-east lost job77',
            completed_at = now()
      WHERE id = $1`,
    [id],
  );
  const [live] = await t.db.query('SELECT * FROM task_rows WHERE id = $1', [id]);
  const [event] = await t.db.query<{ task: Record<string, unknown> }>(
    `SELECT task FROM task_events WHERE task_id = $1 ORDER BY id DESC LIMIT 1`,
    [id],
  );
  const ctx = { trackingDegradedAfter: 3 };
  const shown = toTaskSummary(toTaskRow(live), ctx);
  expect(shown.error?.message).toContain('[redacted] lost [redacted]');
  expect(toTaskSummary(taskRowFromSnapshot(event.task), ctx)).toEqual(shown);
});

/** The event copy of the latest event of task `id`, and the live row's summary beside it. */
async function copyAndLive(
  id: string,
): Promise<{ copy: Record<string, unknown>; live: ReturnType<typeof toTaskSummary> }> {
  const [live] = await t.db.query('SELECT * FROM task_rows WHERE id = $1', [id]);
  const [event] = await t.db.query<{ task: Record<string, unknown> }>(
    `SELECT task FROM task_events WHERE task_id = $1 ORDER BY id DESC LIMIT 1`,
    [id],
  );
  return { copy: event.task, live: toTaskSummary(toTaskRow(live), { trackingDegradedAfter: 3 }) };
}

const INTERNAL_KEYS = [
  'remote_task_id',
  'remote_session_id',
  'server',
  'pinned_worker_id',
  'lease_owner',
];

it('an event copy without an error text leaves out the internal values, and shows the same', async () => {
  const [id] = await insertTasks(t.db, 1, { server: 'billing-east', status: 'working' });
  await t.db.query(
    `UPDATE tasks SET remote_task_id = 'job78', status = 'completed', completed_at = now()
      WHERE id = $1`,
    [id],
  );
  const { copy, live } = await copyAndLive(id);
  expect(Object.keys(copy).filter((key) => INTERNAL_KEYS.includes(key))).toEqual([]);
  expect(toTaskSummary(taskRowFromSnapshot(copy), { trackingDegradedAfter: 3 })).toEqual(live);
});

it("an active task's event copy has its lease row's due time", async () => {
  const [id] = await insertTasks(t.db, 1, { status: 'queued' });
  await t.db.query(
    `UPDATE task_leases SET next_attempt_at = now() + interval '1 hour' WHERE task_id = $1`,
    [id],
  );
  await t.db.query(`UPDATE tasks SET status = 'working', submitted_at = now() WHERE id = $1`, [id]);
  const { copy, live } = await copyAndLive(id);
  expect(live.next_check_at).not.toBeNull();
  expect(toTaskSummary(taskRowFromSnapshot(copy), { trackingDegradedAfter: 3 })).toEqual(live);
});
