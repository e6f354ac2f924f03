// Guards the API side of the task store: idempotent create under concurrency, cancel rules,
// thread deletion that hides for good, keyset listing, and the schema check at boot.
import { TaskStatus, Contract } from '@app/common';
import {
  listTaskPage,
  TaskPagePosition,
  TaskPageQuery,
  assertSchemaCurrent,
  TaskRepository,
  TaskLeaseRepository,
  CatalogRepository,
  NewTask,
  CreateResult,
} from '@app/persistence';
import { Phase } from '@app/common';
import { MIGRATIONS } from '../../../migrations';
import { useTestDatabase } from '../../helpers/db';
import { insertTasks } from '../../helpers/tasks';
import { waitUntil } from '../../helpers/wait';

const t = useTestDatabase();
let tasks: TaskRepository;
beforeAll(async () => {
  tasks = new TaskRepository(t.db);
});

/** No quota refuses these submits (0 is unlimited): the tests are about the store. */
const UNLIMITED = { submitsPerMinute: 0, maxActiveTasks: 0, activeRetryAfterSeconds: 1 };

/** Stores `task` through the shipped submit; none is refused here. */
async function store(task: NewTask): Promise<Exclude<CreateResult, { kind: 'refused' }>> {
  const result = await tasks.create(task, UNLIMITED);
  if (result.kind === 'refused') throw new Error(`refused by ${result.quota}`);
  return result;
}

const base = {
  userId: 'alice',
  threadId: 'th-1',
  toolset: 'demo-ordinary',
  contract: Contract.Ordinary,
  server: 'demo',
  input: { a: 1 },
};

it('creates one task for 20 concurrent requests with the same Idempotency-Key', async () => {
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      store({ ...base, idempotencyKey: 'key-1', requestHash: 'h1' }),
    ),
  );
  expect(new Set(results.map((r) => r.task.id)).size).toBe(1);
  expect(results.filter((r) => r.kind === 'created')).toHaveLength(1);
  expect(results.filter((r) => r.kind === 'replayed')).toHaveLength(19);
  const other = await store({ ...base, idempotencyKey: 'key-1', requestHash: 'h2' });
  expect(other.kind).toBe('conflict');
  const bob = await store({
    ...base,
    userId: 'bob',
    idempotencyKey: 'key-1',
    requestHash: 'h1',
  });
  expect(bob.kind).toBe('created');
});

it('cancels a queued, unsubmitted task at once, and voids any claim on it', async () => {
  const { task } = await store(base);
  const leases = new TaskLeaseRepository(t.db);
  const rows = await leases.claim({
    workerId: 'w',
    limit: 100,
    phases: [Phase.Submit],
    leaseMs: 60000,
    deadWorkerAfterMs: 15000,
  });
  const claimed = rows.find((row) => row.id === task.id)!;
  expect(claimed.phase).toBe(Phase.Submit);
  const result = await tasks.requestCancel('alice', task.id, 'th-1');
  expect(result.kind).toBe('accepted');
  expect(result.kind === 'accepted' && result.task.status).toBe(TaskStatus.Cancelled);
  await expect(leases.markSubmitStarted(claimed.lease)).rejects.toThrow(/lease lost/);
  expect((await tasks.requestCancel('alice', task.id)).kind).toBe('terminal');
});

it('records a cancel request for a submitted task and makes it due for the cancel phase', async () => {
  const [id] = await insertTasks(t.db, 1, {
    status: 'working',
    userId: 'alice',
    threadId: 'th-2',
    dueInMs: 3_600_000,
  });
  const result = await tasks.requestCancel('alice', id);
  expect(result.kind === 'accepted' && result.task.status).toBe(TaskStatus.Working);
  const leases = new TaskLeaseRepository(t.db);
  const rows = await leases.claim({
    workerId: 'w',
    limit: 5,
    phases: [Phase.Cancel],
    leaseMs: 60000,
    deadWorkerAfterMs: 15000,
  });
  expect(rows.map((r) => [r.id, r.phase])).toEqual([[id, Phase.Cancel]]);
});

it('hides a deleted thread for good; the same thread ID later starts empty', async () => {
  const [done] = await insertTasks(t.db, 1, {
    status: 'completed',
    userId: 'carol',
    threadId: 'reused',
  });
  const [active] = await insertTasks(t.db, 1, {
    status: 'working',
    userId: 'carol',
    threadId: 'reused',
  });
  expect(await tasks.deleteThread('carol', 'reused')).toBe(2);
  expect(await tasks.findForUser('carol', done)).toBeNull();
  expect(await tasks.findForUser('carol', active)).toBeNull();
  const rows = await t.db.query<{ cancel_requested_at: Date | null }>(
    `SELECT cancel_requested_at FROM tasks WHERE id = $1`,
    [active],
  );
  expect(rows[0].cancel_requested_at).not.toBeNull();
  const { task: fresh } = await store({ ...base, userId: 'carol', threadId: 'reused' });
  const listed = await listTaskPage(t.db, { userId: 'carol', threadId: 'reused', limit: 10 });
  expect(listed.rows.map((r) => r.id)).toEqual([fresh.id]);
});

it('lists newest first with keyset pages and status filters, per thread and per user', async () => {
  for (let i = 0; i < 7; i += 1)
    await store({ ...base, userId: 'dave', threadId: i % 2 ? 'odd' : 'even' });
  await insertTasks(t.db, 2, { status: 'failed', userId: 'dave', threadId: 'even' });
  const seen: string[] = [];
  let after: TaskPagePosition | undefined;
  do {
    const page = await listTaskPage(t.db, { userId: 'dave', limit: 4, after });
    seen.push(...page.rows.map((r) => r.id));
    after = page.next;
  } while (after);
  expect(seen).toHaveLength(9);
  expect(new Set(seen).size).toBe(9);
  const count = async (query: Partial<TaskPageQuery>) =>
    (await listTaskPage(t.db, { userId: 'dave', limit: 50, ...query })).rows.length;
  expect(await count({ threadId: 'odd' })).toBe(3);
  expect(await count({ status: 'terminal' })).toBe(2);
  expect(await count({ status: 'active' })).toBe(7);
  expect(await count({ status: TaskStatus.Failed })).toBe(2);
});

it('refuses to start on a schema that lacks a migration, naming it', async () => {
  await t.db.query(`DELETE FROM schema_migrations WHERE name = 'InitialSchema1764417600000'`);
  await expect(assertSchemaCurrent(t.db, MIGRATIONS)).rejects.toThrow(
    'database schema is missing migration(s): InitialSchema1764417600000; run "npm run migrate" first',
  );
});

it('a connection killed inside a transaction fails that transaction, not the process', async () => {
  const attempt = t.db.transaction(async (tx) => {
    const [{ pid }] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await t.db.query('SELECT pg_terminate_backend($1)', [pid]);
    await waitUntil(
      async () => {
        const rows = await t.db.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
        return rows.length === 0 ? true : undefined;
      },
      'the backend to end',
      10_000,
    );
    await tx.query('SELECT 1');
  });
  await expect(attempt).rejects.toThrow();
  // The pool still works: the broken client was discarded, not handed out again.
  await Promise.all(Array.from({ length: 12 }, () => t.db.query('SELECT 1')));
});

describe('the submit checked against the catalog row it was decided on', () => {
  const quota = { submitsPerMinute: 0, maxActiveTasks: 0, activeRetryAfterSeconds: 1 };
  const entry = {
    name: 'guarded',
    server: 'demo',
    contract: Contract.Ordinary,
    description: 'd',
    inputSchema: { type: 'object' },
    available: true,
    unavailableReason: null,
  };
  const versionOf = async (): Promise<string> =>
    (
      await t.db.query<{ v: string }>(`SELECT xmin::text AS v FROM toolsets WHERE name = 'guarded'`)
    )[0].v;
  const countOf = async (): Promise<number> =>
    Number(
      (
        await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM tasks WHERE toolset = 'guarded'`)
      )[0].n,
    );

  it('inserts while the row is that version, and writes nothing once it has changed or gone', async () => {
    const catalog = new CatalogRepository(t.db);
    await catalog.publish([entry]);
    const version = await versionOf();
    const task = { ...base, toolset: 'guarded' };
    expect((await tasks.createIfCatalogUnchanged(task, quota, version)).kind).toBe('created');
    await catalog.publish([{ ...entry, description: 'changed' }]);
    expect((await tasks.createIfCatalogUnchanged(task, quota, version)).kind).toBe('stale');
    const changed = await versionOf();
    expect(changed).not.toBe(version);
    expect((await tasks.createIfCatalogUnchanged(task, quota, changed)).kind).toBe('created');
    await t.db.query(`DELETE FROM toolsets WHERE name = 'guarded'`);
    expect((await tasks.createIfCatalogUnchanged(task, quota, changed)).kind).toBe('stale');
    expect(await countOf()).toBe(2);
  });
});
