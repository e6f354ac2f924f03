// Guards the event outbox: a committed status change always has its event (same transaction), sequences increase, progress is rate-limited, hidden tasks vanish, and the stream order never skips a late commit.
import { Client } from 'pg';
import { EventRepository, STREAM_START, TaskEventRow, WebhookRepository } from '@app/persistence';
import { publicEventId, toEventView } from '@app/views';
import { toTaskRow } from '@app/persistence';
import { toTaskSummary } from '@app/views';
import { useTestDatabase } from '../helpers/db';
import { insertTasks } from '../helpers/tasks';
import { waitUntil } from '../helpers/wait';

const db = useTestDatabase();

const CTX = { trackingDegradedAfter: 3 };

async function events(taskId: string): Promise<Array<{ type: string; sequence: number }>> {
  return db.db.query(`SELECT type, sequence FROM task_events WHERE task_id = $1 ORDER BY id`, [
    taskId,
  ]);
}

async function setStatus(id: string, status: string, extra = ''): Promise<void> {
  const terminal = ['completed', 'failed', 'cancelled'].includes(status);
  await db.db.query(
    `UPDATE tasks SET status = $2 ${extra},
            completed_at = CASE WHEN $3 THEN now() ELSE completed_at END
      WHERE id = $1`,
    [id, status, terminal],
  );
}

it('writes one event per status change with an increasing sequence, in the same transaction', async () => {
  const [id] = await insertTasks(db.db, 1, { userId: 'u-seq', threadId: 't-seq' });
  await setStatus(id, 'working');
  await setStatus(id, 'input_required');
  await setStatus(id, 'working');
  await setStatus(id, 'failed', `, error_code = 'upstream_failed', error_message = 'boom'`);
  expect(await events(id)).toEqual([
    { type: 'task.working', sequence: 1 },
    { type: 'task.input_required', sequence: 2 },
    { type: 'task.working', sequence: 3 },
    { type: 'task.failed', sequence: 4 },
  ]);
  const [{ event_seq }] = await db.db.query(`SELECT event_seq FROM tasks WHERE id = $1`, [id]);
  expect(event_seq).toBe(4);
  // The terminal row is still immutable.
  await expect(
    db.db.query(`UPDATE tasks SET progress = '{"a":1}' WHERE id = $1`, [id]),
  ).rejects.toThrow(/terminal/);
  // A rolled-back change leaves no event.
  const [other] = await insertTasks(db.db, 1, { userId: 'u-seq', threadId: 't-seq' });
  await expect(
    db.db.transaction(async (tx) => {
      await tx.query(`UPDATE tasks SET status = 'working' WHERE id = $1`, [other]);
      throw new Error('rollback');
    }),
  ).rejects.toThrow('rollback');
  expect(await events(other)).toEqual([]);
});

it('rate-limits progress events to one per task per 2 s', async () => {
  const [id] = await insertTasks(db.db, 1, { userId: 'u-prog', threadId: 't-prog' });
  await setStatus(id, 'working');
  for (let i = 1; i <= 5; i++) {
    await db.db.query(`UPDATE tasks SET progress = $2::jsonb WHERE id = $1`, [
      id,
      JSON.stringify({ current: i, total: 5 }),
    ]);
  }
  const types = (await events(id)).map((e) => e.type);
  expect(types).toEqual(['task.working', 'task.progress']);
  // Once the window has passed, the next change is an event again.
  await db.db.query(
    `UPDATE tasks SET progress_event_at = now() - interval '3 seconds' WHERE id = $1`,
    [id],
  );
  await db.db.query(`UPDATE tasks SET progress = '{"current":6}' WHERE id = $1`, [id]);
  expect((await events(id)).map((e) => e.sequence)).toEqual([1, 2, 3]);
});

it("creates a delivery per active subscription of the task's user only", async () => {
  const hooks = new WebhookRepository(db.db);
  const base = { url: 'https://example.com/h', description: null, secret: 'whsec_AAAA' };
  await hooks.create({ ...base, id: 'wh_a1', userId: 'u-hook' });
  await hooks.create({ ...base, id: 'wh_a2', userId: 'u-hook' });
  await hooks.create({ ...base, id: 'wh_b1', userId: 'u-other' });
  await db.db.query(`UPDATE webhook_subscriptions SET disabled_at = now() WHERE id = 'wh_a2'`);
  const [id] = await insertTasks(db.db, 1, { userId: 'u-hook', threadId: 't-hook' });
  await setStatus(id, 'working');
  await setStatus(id, 'completed');
  const rows = await db.db.query(
    `SELECT d.subscription_id, e.type FROM webhook_deliveries d JOIN task_events e ON e.id = d.event_id
      WHERE e.task_id = $1 ORDER BY d.id`,
    [id],
  );
  expect(rows).toEqual([
    { subscription_id: 'wh_a1', type: 'task.working' },
    { subscription_id: 'wh_a1', type: 'task.completed' },
  ]);
});

it('deletes the events of hidden tasks and writes none for them', async () => {
  const [a, b] = await insertTasks(db.db, 2, { userId: 'u-hide', threadId: 't-hide' });
  await setStatus(a, 'working');
  await setStatus(a, 'completed');
  await setStatus(b, 'working');
  await db.db.query(`UPDATE tasks SET thread_deleted_at = now() WHERE thread_id = 't-hide'`);
  await setStatus(b, 'cancelled');
  expect(await events(a)).toEqual([]);
  expect(await events(b)).toEqual([]);
});

it('shows the event task summary exactly as the API shows a listed task', async () => {
  const [id] = await insertTasks(db.db, 1, { userId: 'u-proj', threadId: 't-proj' });
  await db.db.query(`UPDATE tasks SET metadata = '{"ticket":"OPS-1"}' WHERE id = $1`, [id]);
  await setStatus(
    id,
    'working',
    `, submitted_at = now(), consecutive_errors = 4, last_error = 'x'`,
  );
  await setStatus(
    id,
    'failed',
    `, error_code = 'upstream_failed', error_message = repeat('e', 3000), progress = '{"current":1}'`,
  );
  // A transaction open anywhere in the cluster (another test file's, in parallel) holds the
  // stream back until it ends: wait for the page to settle instead of reading it once.
  const page = await settledPage(new EventRepository(db.db), 'u-proj', 't-proj');
  const last = page.events.at(-1) as TaskEventRow;
  const [row] = await db.db.query(`SELECT * FROM tasks WHERE id = $1`, [id]);
  const api = toTaskSummary(toTaskRow(row), { ...CTX, unavailableReason: null });
  expect(toEventView(last, CTX).task).toEqual(api);
  expect(toEventView(last, CTX)).toMatchObject({
    id: publicEventId(last.taskId, last.sequence),
    type: 'task.failed',
    sequence: 2,
    data: { previous_status: 'working' },
  });
});

it('never lets a stream position pass an event whose transaction commits later', async () => {
  const repo = new EventRepository(db.db);
  const [early, late] = await insertTasks(db.db, 2, { userId: 'u-ord', threadId: 't-ord' });
  const slow = new Client({ connectionString: db.url });
  await slow.connect();
  try {
    // The slow transaction takes the smaller event ID, the fast one commits first.
    await slow.query('BEGIN');
    await slow.query(`UPDATE tasks SET status = 'working' WHERE id = $1`, [early]);
    await setStatus(late, 'working');
    const first = await repo.threadEvents('u-ord', 't-ord', STREAM_START, 10);
    expect(first.events).toEqual([]);
    expect(first.unsettled).toBe(true);
    await slow.query('COMMIT');
    const second = await settledPage(repo, 'u-ord', 't-ord');
    expect(second.events.map((e) => e.taskId).sort()).toEqual([early, late].sort());
    expect(second.unsettled).toBe(false);
  } finally {
    await slow.end();
  }
});

async function settledPage(repo: EventRepository, userId: string, threadId: string) {
  return waitUntil(
    async () => {
      const page = await repo.threadEvents(userId, threadId, STREAM_START, 10);
      return page.unsettled ? undefined : page;
    },
    'the event stream to settle',
    20_000,
  );
}
