// Guards docs/leases.md, "Fleet-wide caps": claims that start together never lease more rows of a
// capped server than its cap, counted from the live leases (the advisory lock's job).
import { Phase } from '@app/common';
import { Database, TaskLeaseRepository } from '@app/persistence';
import { testPool, useTestDatabase } from '../helpers/db';

const database = useTestDatabase();
const CAP = 3;
const CLAIMERS = 6;
const ROUNDS = 15;

beforeAll(async () => {
  await database.db.query(
    `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input)
     SELECT 'task_capped_' || g, 'user-' || (g % 7), 'thread-1', 'demo-sync', 'sync-call',
            'capped', 'queued', '{}'::jsonb
       FROM generate_series(1, 500) AS g`,
  );
  await database.db.query(`UPDATE task_leases SET next_attempt_at = now() - interval '1 minute'`);
});

it.each([
  ['due order', false],
  ['fair share', true],
])('%s: six claimers at once never hold more than the cap of 3 live leases', async (_, fair) => {
  const pools = Array.from({ length: CLAIMERS }, () => testPool(database.url, 2));
  const claimers = pools.map((pool) => new TaskLeaseRepository(new Database(pool)));
  try {
    const held: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(
        claimers.map((leases, i) =>
          leases.claim({
            workerId: `cap-${i}`,
            limit: 4,
            phases: [Phase.Submit],
            leaseMs: 60_000,
            deadWorkerAfterMs: 30_000,
            fleetCaps: new Map([['capped', CAP]]),
            fairShare: fair ? { weights: new Map<string, number>() } : undefined,
          }),
        ),
      );
      const [live] = await database.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM task_rows
            WHERE server = 'capped' AND lease_token IS NOT NULL AND lease_expires_at > now()`,
      );
      held.push(live.n);
      // The calls end: the leases are given back, due now, for the next round.
      await database.db.query(
        `UPDATE task_leases SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
                               next_attempt_at = now() - interval '1 minute'
            WHERE lease_token IS NOT NULL`,
      );
    }
    // Every round filled the cap (the work went on) and no round went past it.
    expect(held).toEqual(Array.from({ length: ROUNDS }, () => CAP));
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
  }
});
