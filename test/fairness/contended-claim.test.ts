// Guards docs/leases.md, "Fair share" (Concurrent claimers): a fair claim that finds its
// best-ranked rows held by a concurrent claim says so, and only then, so that its worker claims
// again once that claim has committed instead of leaving its slots idle until the next wake-up.
import { PoolClient } from 'pg';
import { Phase } from '@app/common';
import { ClaimRequest, Queryable, TaskLeaseRepository } from '@app/persistence';
import { testPool, useTestDatabase } from '../helpers/db';
import { dueInOrder, insertTasks, leaseLive } from '../helpers/tasks';

const t = useTestDatabase();

afterEach(async () => {
  await t.db.query(`DELETE FROM tasks`);
});

const fair: ClaimRequest = {
  workerId: 'small',
  limit: 2,
  phases: [Phase.Submit],
  leaseMs: 60_000,
  deadWorkerAfterMs: 30_000,
  fairShare: { weights: new Map() },
};

/** `count` due rows of `user`, due a millisecond apart from a minute ago (rank order = this order). */
async function seed(user: string, count: number): Promise<string[]> {
  const ids = await insertTasks(t.db, count, { userId: user });
  await dueInOrder(t.db, ids, -60_000);
  return ids;
}

/**
 * Leases `ids` as a concurrent claim's statement does, in a transaction left open: the rows stay
 * locked, and due in every other snapshot, until `commit`.
 */
async function concurrentClaim(ids: string[]): Promise<{ commit: () => Promise<void> }> {
  const pool = testPool(t.url, 1);
  const client: PoolClient = await pool.connect();
  await client.query('BEGIN');
  const inTransaction: Queryable = {
    query: async (sql: string, params?: unknown[]) => (await client.query(sql, params)).rows,
  };
  await leaseLive(inTransaction, ids, 'big');
  return {
    commit: async () => {
      await client.query('COMMIT');
      client.release();
      await pool.end();
    },
  };
}

it('comes back short and contended beside a larger claim, and takes the rows behind once it committed', async () => {
  const ids = await seed('noisy', 30);
  // The larger claim holds the first ten: every row the small claim ranks best (twice its limit).
  const big = await concurrentClaim(ids.slice(0, 10));
  const leases = new TaskLeaseRepository(t.db);
  let held;
  try {
    held = await leases.claimBatch(fair);
  } finally {
    // Committed even when the claim fails: an open transaction would hold the rows past the test.
    await big.commit();
  }
  expect({ taken: held.tasks.length, contended: held.contended }).toEqual({
    taken: 0,
    contended: true,
  });
  const after = await leases.claimBatch(fair);
  expect(after.tasks.map((task) => task.id)).toEqual(ids.slice(10, 12));
  expect(after.contended).toBe(false);
});

it('takes what it can lock and still says contended when part of its best rows were held', async () => {
  const ids = await seed('noisy', 30);
  const big = await concurrentClaim(ids.slice(0, 3));
  try {
    const claim = await new TaskLeaseRepository(t.db).claimBatch(fair);
    expect(claim.tasks.map((task) => task.id)).toEqual([ids[3]]);
    expect(claim.contended).toBe(true);
  } finally {
    await big.commit();
  }
});

it('the due-order claim walks past the held rows and is never contended', async () => {
  const ids = await seed('noisy', 30);
  const big = await concurrentClaim(ids.slice(0, 10));
  try {
    const claim = await new TaskLeaseRepository(t.db).claimBatch({ ...fair, fairShare: undefined });
    expect(claim.tasks.map((task) => task.id)).toEqual(ids.slice(10, 12));
    expect(claim.contended).toBe(false);
  } finally {
    await big.commit();
  }
});

it('is not contended when nothing is due, nor when the headroom held the rows back', async () => {
  const leases = new TaskLeaseRepository(t.db);
  expect(await leases.claimBatch(fair)).toEqual({ tasks: [], contended: false });
  // Two principals, noisy the leader with 5 live leases; quiet has one live and nothing due.
  // Nothing is open, and noisy's rows rank above its level: the claim locks them and takes none.
  // A retry would only find the same: no claim loop under a flood.
  await seed('noisy', 30);
  const live = [
    ...(await insertTasks(t.db, 5, { userId: 'noisy' })),
    ...(await insertTasks(t.db, 1, { userId: 'quiet' })),
  ];
  await leaseLive(t.db, live, 'elsewhere');
  const claim = await leases.claimBatch({ ...fair, fairShare: { weights: new Map(), open: 0 } });
  expect(claim).toEqual({ tasks: [], contended: false });
});
