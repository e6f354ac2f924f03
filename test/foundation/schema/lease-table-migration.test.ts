// Guards the stop-the-fleet upgrade to the lease table (docs/operations.md, "Upgrading to the
// lease table"): the migration refuses to run while a poller is alive, and carries every active
// task's due time, lease and claim count over, so a lease a dead poller held is rescued as usual.
import { randomBytes } from 'node:crypto';
import { Phase } from '@app/common';
import { migrateDatabase, TaskLeaseRepository } from '@app/persistence';
import { MIGRATIONS } from '../../../migrations';
import {
  TestDatabase,
  adminQuery,
  clonePrefix,
  ownedDatabase,
  testPool,
  withDatabase,
} from '../../helpers/db';

const BEFORE = MIGRATIONS.slice(
  0,
  MIGRATIONS.findIndex((m) => m.name === 'LeaseTable1796470000000'),
);

let t: TestDatabase;

async function migrate(migrations: typeof MIGRATIONS): Promise<void> {
  await migrateDatabase(t.url, migrations, 'test-migrate');
}

beforeEach(async () => {
  // Named like the run's clones, so a run killed midway leaves nothing the next one keeps.
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  const name = clonePrefix(process.env.TEST_TEMPLATE_DATABASE!) + randomBytes(5).toString('hex');
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  t = ownedDatabase(adminUrl, name, testPool(withDatabase(adminUrl, name), 2));
  await migrate(BEFORE);
});
afterEach(async () => {
  await t.drop();
});

/** The schema before the lease table: the lease columns on `tasks`. */
async function insertOld(id: string, status: string, extra: string): Promise<void> {
  await t.db.query(
    `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input,
                        tenant, claim_count, completed_at, error_code, next_attempt_at,
                        lease_owner, lease_token, lease_expires_at)
     SELECT $1, 'u1', 'th', 'demo-ordinary', 'ordinary', 'demo', $2, '{}'::jsonb, 'acme', 3,
            CASE WHEN $2 = 'completed' THEN now() END, NULL, ${extra}`,
    [id, status],
  );
}

it('refuses to run while a poller heartbeat is fresh, and changes nothing', async () => {
  // TypeORM logs the failed migration to the console; the rejection is what is checked.
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
  await t.db.query(`INSERT INTO workers (id, host, pid, version) VALUES ('alive', 'h', 1, 'v')`);
  await expect(migrate(MIGRATIONS)).rejects.toThrow(/needs the poller fleet stopped/);
  const [{ exists }] = await t.db.query<{ exists: boolean }>(
    `SELECT to_regclass('task_leases') IS NOT NULL AS exists`,
  );
  expect(exists).toBe(false);
});

it("carries each active task's lease over; a dead poller's expired lease is rescued", async () => {
  await t.db.query(
    `INSERT INTO workers (id, host, pid, version, heartbeat_at)
     VALUES ('dead', 'h', 1, 'v', now() - interval '10 minutes')`,
  );
  await insertOld('task_due', 'working', `now() - interval '1 s', NULL, NULL, NULL`);
  await insertOld(
    'task_held',
    'working',
    `now() - interval '2 s', 'dead', gen_random_uuid(), now() - interval '2 s'`,
  );
  await insertOld('task_done', 'completed', 'NULL, NULL, NULL, NULL');
  await migrate(MIGRATIONS);

  const leases = await t.db.query<Record<string, unknown>>(
    `SELECT task_id, principal, claim_count, lease_owner, queued FROM task_leases ORDER BY 1`,
  );
  expect(leases).toEqual([
    { task_id: 'task_due', principal: 'acme', claim_count: 3, lease_owner: null, queued: false },
    { task_id: 'task_held', principal: 'acme', claim_count: 3, lease_owner: 'dead', queued: false },
  ]);
  const claimed = await new TaskLeaseRepository(t.db).claim({
    workerId: 'survivor',
    limit: 10,
    phases: [Phase.Poll],
    leaseMs: 60_000,
    deadWorkerAfterMs: 15_000,
  });
  expect(claimed.map((c) => [c.id, c.rescued]).sort()).toEqual([
    ['task_due', false],
    ['task_held', true],
  ]);
  const [done] = await t.db.query(
    `SELECT status, claim_count FROM task_rows WHERE id = 'task_done'`,
  );
  expect(done).toEqual({ status: 'completed', claim_count: 3 });
});
