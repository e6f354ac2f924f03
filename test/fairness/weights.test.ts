// Guards docs/leases.md, "Fair share": with both principals saturated, claims split by weight.
import { Phase, TaskStatus } from '@app/common';
import { ClaimRequest, Database, TaskLeaseRepository } from '@app/persistence';
import { testPool, useTestDatabase } from '../helpers/db';

const database = useTestDatabase();
const CLIENTS = 4;
// Claims of 16: with claims of 8 from four claimers at once, collisions drifted the share to
// 3.1–3.2:1 (a lone claimer gives exactly 3:1), too close to the bound.
const BATCH = 16;
const WINDOW = 2000;

/**
 * `count` queued rows of `user`, due over the past `fromMinutes`..`toMinutes` minutes, in one
 * statement. The pinned-worker rule and servers do not matter here.
 */
async function seed(user: string, count: number, fromMinutes: number, toMinutes: number) {
  await database.db.query(
    `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input)
     SELECT 'task_' || md5($1 || g), $1, 'thread-1', 'demo-ordinary', 'ordinary', 'demo',
            'queued', '{}'::jsonb
       FROM generate_series(1, $2::int) AS g`,
    [user, count],
  );
  // The due times on the lease rows the insert made, row g by the same ID.
  await database.db.query(
    `UPDATE task_leases
        SET next_attempt_at = now() - make_interval(mins => $3)
                              + (g::float8 / $2) * make_interval(mins => $3 - $4)
       FROM generate_series(1, $2::int) AS g
      WHERE task_id = 'task_' || md5($1 || g)`,
    [user, count, fromMinutes, toMinutes],
  );
}

/** One claimer with its own connections: claims, then ends what it claimed, until told to stop. */
async function claimer(
  name: string,
  request: Omit<ClaimRequest, 'workerId' | 'limit'>,
  tally: Map<string, number>,
  done: () => boolean,
): Promise<void> {
  const pool = testPool(database.url, 2);
  const leases = new TaskLeaseRepository(new Database(pool));
  try {
    while (!done()) {
      const claimed = await leases.claim({ ...request, workerId: name, limit: BATCH });
      for (const item of claimed) tally.set(item.userId, (tally.get(item.userId) ?? 0) + 1);
      await Promise.all(
        claimed.map((item) =>
          leases.finish(item.lease, {
            status: TaskStatus.Completed,
            result: { value: null, preview: null, truncated: false },
          }),
        ),
      );
    }
  } finally {
    await pool.end();
  }
}

async function claimWindow(request: Omit<ClaimRequest, 'workerId' | 'limit'>) {
  const tally = new Map<string, number>();
  const total = () => [...tally.values()].reduce((sum, n) => sum + n, 0);
  await Promise.all(
    Array.from({ length: CLIENTS }, (_, i) =>
      claimer(`weights-${i}`, request, tally, () => total() >= WINDOW),
    ),
  );
  return tally;
}

it('A:B weighted 3:1, both saturated: claimed shares within 10% of 3:1 across concurrent claimers', async () => {
  // B's rows are all due later than A's: in due order alone, A would take every claim.
  await seed('alice', 4000, 120, 61);
  await seed('bob', 4000, 60, 1);
  const tally = await claimWindow({
    phases: [Phase.Submit, Phase.Poll, Phase.Cancel],
    leaseMs: 60_000,
    deadWorkerAfterMs: 30_000,
    fairShare: { weights: new Map([['alice', 3]]) },
  });
  const alice = tally.get('alice') ?? 0;
  const bob = tally.get('bob') ?? 0;
  // The window ends well before either backlog does: both stay saturated throughout.
  expect(alice).toBeLessThan(4000);
  expect(bob).toBeLessThan(4000);
  expect(bob).toBeGreaterThan(0);
  expect(alice / bob).toBeGreaterThanOrEqual(3 * 0.9);
  expect(alice / bob).toBeLessThanOrEqual(3 * 1.1);
});

it('work-conserving: a principal alone fills every slot; a tenant groups its users', async () => {
  await database.db.query(`DELETE FROM tasks`);
  await seed('carol', 50, 10, 1);
  await seed('dave', 50, 10, 1);
  // A tenant is set at submit and is the principal of the task's lease row from then on.
  await database.db.query(`UPDATE tasks SET tenant = 'acme'`);
  await database.db.query(`UPDATE task_leases SET principal = 'acme'`);
  const leases = new TaskLeaseRepository(database.db);
  const request = {
    workerId: 'conserving',
    phases: [Phase.Submit, Phase.Poll, Phase.Cancel],
    leaseMs: 60_000,
    deadWorkerAfterMs: 30_000,
    // carol and dave are one principal, acme; their own weights do not apply.
    fairShare: { weights: new Map([['carol', 1000]]) },
  };
  const oldest = await database.db.query<{ id: string }>(
    `SELECT id FROM task_rows ORDER BY next_attempt_at LIMIT 30`,
  );
  const first = await leases.claim({ ...request, limit: 30 });
  expect(first).toHaveLength(30);
  // In due order within the principal: the 30 oldest of acme's 100 rows.
  expect(new Set(first.map((item) => item.id))).toEqual(new Set(oldest.map((row) => row.id)));
});
