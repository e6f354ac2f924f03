// Guards the submit's wake-up (docs/leases.md, "Wake-ups"): the quota-checked submit's own
// transaction sends no NOTIFY (it would hold the database-wide notify lock through its commit),
// the repository sends one after the commit instead, and every other insert still notifies from
// the trigger. Postgres delivers notifications in commit order, so a marker sent after a
// transaction has committed tells "none from it" without waiting for a silence. The coalescing
// itself (one in flight, the next after every later commit) is coalesced-notify.spec.ts.
import { Client } from 'pg';
import { Contract } from '@app/common';
import { TASKS_DUE_CHANNEL, TaskRepository } from '@app/persistence';
import { useTestDatabase } from '../../helpers/db';
import { insertTasks } from '../../helpers/tasks';
import { waitUntil } from '../../helpers/wait';

const t = useTestDatabase();
let listener: Client;
const heard: string[] = [];

beforeAll(async () => {
  listener = new Client({ connectionString: t.url });
  // The database's forced drop at teardown may end this connection first.
  listener.on('error', () => undefined);
  await listener.connect();
  listener.on('notification', (n) => heard.push(n.payload ?? ''));
  await listener.query(`LISTEN ${TASKS_DUE_CHANNEL}`);
});

afterAll(async () => {
  await listener?.end();
});

const QUOTA = { submitsPerMinute: 0, maxActiveTasks: 0, activeRetryAfterSeconds: 1 };
const task = (userId: string) => ({
  userId,
  threadId: 'wake',
  toolset: 'demo-ordinary',
  contract: Contract.Ordinary,
  server: 'demo',
  input: {},
});

/** What the listener hears up to `marker`, sent on the channel after everything before it. */
async function heardUntil(marker: string): Promise<string[]> {
  await t.db.query(`SELECT pg_notify($1, $2)`, [TASKS_DUE_CHANNEL, marker]);
  await waitUntil(() => (heard.includes(marker) ? true : undefined), `the marker ${marker}`);
  return heard.splice(0, heard.indexOf(marker) + 1).slice(0, -1);
}

it('the quota-checked submit commits without a NOTIFY, and the repository sends one after it', async () => {
  heard.length = 0;
  // The function alone, in a transaction of its own: nothing from it reaches the listener.
  const [row] = await t.db.query<{ id: string }>(
    `SELECT id FROM submit_task_notify_after_commit('tsk_quiet', 'u-quiet', 'wake',
        'demo-ordinary', 'ordinary', 'demo', '{}', NULL, NULL, NULL, NULL, 3600, NULL, 0, 0, 1)`,
  );
  expect(row.id).toBe('tsk_quiet');
  expect(await heardUntil('after-function')).toEqual([]);

  // Through the repository: one wake-up follows the committed submit.
  const created = await new TaskRepository(t.db).create(task('u-repo'), QUOTA);
  if (created.kind !== 'created') throw new Error(`not created: ${created.kind}`);
  await waitUntil(() => (heard.includes('submit') ? true : undefined), 'the wake-up');
  const [{ n }] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM tasks WHERE id = $1`,
    [created.task.id],
  );
  expect(n).toBe(1);
});

it('any other insert still notifies from its own transaction (an older API, the CLI, a script)', async () => {
  heard.length = 0;
  await insertTasks(t.db, 1, { userId: 'u-plain', threadId: 'wake' });
  expect(await heardUntil('after-insert')).toEqual(['submit']);
});
