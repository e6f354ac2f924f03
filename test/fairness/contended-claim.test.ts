// Guards docs/leases.md, "Fair share" (Concurrent claimers): a fair claim comes back short only
// when no more due row can be locked, as the due-order claim does, however many of its
// best-ranked rows another claimer holds at that moment.
import { Client } from 'pg';
import { Phase } from '@app/common';
import { ClaimRequest, TaskLeaseRepository } from '@app/persistence';
import { useTestDatabase } from '../helpers/db';
import { dueInOrder, insertTasks } from '../helpers/tasks';

const t = useTestDatabase();

afterEach(async () => {
  await t.db.query(`DELETE FROM tasks`);
});

const request: Omit<ClaimRequest, 'fairShare' | 'limit'> = {
  workerId: 'claimer',
  phases: [Phase.Submit],
  leaseMs: 60_000,
  deadWorkerAfterMs: 30_000,
};

/** `count` due rows of `user`, due a millisecond apart from `dueInMs` on; their IDs in due order. */
async function seed(user: string, count: number, dueInMs: number): Promise<string[]> {
  const ids = await insertTasks(t.db, count, { userId: user });
  await dueInOrder(t.db, ids, dueInMs);
  return ids;
}

/**
 * Runs `body` while another connection holds the lease rows of `ids` locked, as a concurrent
 * claim does between locking its rows and committing their leases.
 */
async function whileLocked<T>(ids: string[], body: () => Promise<T>): Promise<T> {
  const other = new Client({ connectionString: t.url });
  await other.connect();
  try {
    await other.query('BEGIN');
    await other.query(`SELECT 1 FROM task_leases WHERE task_id = ANY($1::text[]) FOR UPDATE`, [
      ids,
    ]);
    return await body();
  } finally {
    await other.query('ROLLBACK');
    await other.end();
  }
}

async function claim(limit: number, open?: number): Promise<string[]> {
  const rows = await new TaskLeaseRepository(t.db).claim({
    ...request,
    limit,
    fairShare: { weights: new Map(), open },
  });
  return rows.map((row) => row.id);
}

it('a claim of one whose best-ranked rows another claimer holds takes the next due row', async () => {
  const ids = await seed('noisy', 20, -60_000);
  // The claim ranks a few rows past its limit; another claimer holds more than that.
  const taken = await whileLocked(ids.slice(0, 10), () => claim(1));
  expect(taken).toEqual([ids[10]]);
});

it('a larger claim fills its room past the held rows, in rank order first', async () => {
  const noisy = await seed('noisy', 40, -60_000);
  const quiet = await seed('quiet', 3, -1_000);
  // The other claimer holds quiet's rows and noisy's first 20: what is left is noisy's.
  const taken = await whileLocked([...quiet, ...noisy.slice(0, 20)], () => claim(5));
  expect(taken.sort()).toEqual(noisy.slice(20, 25).sort());
});

it('the rows taken past the ranked ones stay within the open places (the headroom)', async () => {
  const noisy = await seed('noisy', 40, -60_000);
  const quiet = await seed('quiet', 1, -1_000);
  // Two principals, so the headroom holds: 2 of the claim's 5 are open to anyone, and no live
  // lease anywhere puts the leader's level at 0. quiet's row ranks first and is free; noisy's
  // ranked rows are held elsewhere, so the rest comes from the due-order fill, whose rows have
  // no rank: only the second open place takes one.
  const taken = await whileLocked(noisy.slice(0, 20), () => claim(5, 2));
  expect(taken.sort()).toEqual([quiet[0], noisy[20]].sort());
});
