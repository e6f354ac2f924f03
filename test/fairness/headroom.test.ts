// Guards docs/leases.md, "Fair share" (Headroom): the claim's rows past `open` go only to
// principals ranked below the fleet's leader, unless a single principal is all there is.
import { Phase } from '@app/common';
import { ClaimRequest, TaskLeaseRepository } from '@app/persistence';
import { useTestDatabase } from '../helpers/db';
import { dueInOrder, insertTasks, leaseLive } from '../helpers/tasks';

const t = useTestDatabase();

afterEach(async () => {
  await t.db.query(`DELETE FROM tasks`);
});

const request: Omit<ClaimRequest, 'fairShare'> = {
  workerId: 'claimer',
  limit: 10,
  phases: [Phase.Submit],
  leaseMs: 60_000,
  deadWorkerAfterMs: 30_000,
};

/**
 * `due` rows of `user`, due from `dueInMs` from now on, a millisecond apart (so that rank order
 * is one order), and `held` more leased by another worker.
 */
async function seed(user: string, due: number, held: number, dueInMs: number): Promise<void> {
  if (due > 0) {
    await dueInOrder(t.db, await insertTasks(t.db, due, { userId: user }), dueInMs);
  }
  if (held === 0) return;
  await leaseLive(t.db, await insertTasks(t.db, held, { userId: user }), 'elsewhere');
}

/** One fair claim with `open` open rows; how many rows of each principal it took. */
async function claim(open: number | undefined, weights = new Map<string, number>()) {
  const rows = await new TaskLeaseRepository(t.db).claim({
    ...request,
    fairShare: { weights, open },
  });
  const taken = new Map<string, number>();
  for (const row of rows) taken.set(row.userId, (taken.get(row.userId) ?? 0) + 1);
  return { noisy: taken.get('noisy') ?? 0, quiet: taken.get('quiet') ?? 0 };
}

it('a lone principal takes every row however little is open (the single-principal escape)', async () => {
  await seed('noisy', 30, 5, -60_000);
  expect(await claim(0)).toEqual({ noisy: 10, quiet: 0 });
});

it('with a second principal, a claim with nothing open takes only its rows, up to the leader', async () => {
  // noisy holds 5 live leases: the leader, at level 5. quiet holds 1: its due rows rank 2, 3, 4,
  // 5 and 6, and only those below 5 may take the headroom. Its rows are the younger, so due
  // order alone would take noisy's first.
  await seed('noisy', 30, 5, -60_000);
  await seed('quiet', 5, 1, -1_000);
  expect(await claim(0)).toEqual({ noisy: 0, quiet: 3 });
});

it("open rows go to anyone in rank order; the rest stay free of the leader's rows", async () => {
  await seed('noisy', 30, 5, -60_000);
  await seed('quiet', 2, 1, -1_000);
  // Rank order: quiet's two (2 and 3), then noisy's (6, 7, …). Four open places: quiet's two and
  // two of noisy's; the other six of the claim's ten stay free for a principal below noisy.
  expect(await claim(4)).toEqual({ noisy: 2, quiet: 2 });
});

it('the leader is counted by weight', async () => {
  await seed('noisy', 30, 5, -60_000);
  await seed('quiet', 5, 1, -1_000);
  // noisy weighs 5: its 5 live leases are level 1, as quiet's one is. Both lead, and neither's
  // next row ((5 + 1) / 5, (1 + 1) / 1) is below level 1.
  expect(await claim(0, new Map([['noisy', 5]]))).toEqual({ noisy: 0, quiet: 0 });
  // noisy weighs 10 (level 0.5): quiet leads at 1, and noisy's rows rank (5 + nth) / 10, below
  // 1 for its first four.
  expect(await claim(0, new Map([['noisy', 10]]))).toEqual({ noisy: 4, quiet: 0 });
});

it('a second principal with nothing due keeps the headroom empty (its cost)', async () => {
  await seed('noisy', 30, 5, -60_000);
  await seed('quiet', 0, 1, 0);
  expect(await claim(0)).toEqual({ noisy: 0, quiet: 0 });
  expect(await claim(3)).toEqual({ noisy: 3, quiet: 0 });
});

it('without `open`, or with all of the claim open, every row is open as before', async () => {
  await seed('noisy', 30, 5, -60_000);
  await seed('quiet', 2, 1, -1_000);
  expect(await claim(undefined)).toEqual({ noisy: 8, quiet: 2 });
  await t.db.query(`DELETE FROM tasks`);
  await seed('noisy', 30, 5, -60_000);
  await seed('quiet', 2, 1, -1_000);
  expect(await claim(10)).toEqual({ noisy: 8, quiet: 2 });
});

it("an open place is counted among the rows the claim could lock: a leader's row another claim holds does not use one up", async () => {
  await seed('noisy', 30, 5, -60_000);
  await seed('quiet', 0, 1, 0);
  const [oldest] = await t.db.query<{ task_id: string }>(
    `SELECT task_id FROM task_leases WHERE principal = 'noisy' AND lease_token IS NULL
      ORDER BY next_attempt_at LIMIT 1`,
  );
  // A concurrent claim holds noisy's best-ranked row: this one skips it and takes the next.
  await t.db.transaction(async (tx) => {
    await tx.query(`SELECT 1 FROM task_leases WHERE task_id = $1 FOR UPDATE`, [oldest.task_id]);
    expect(await claim(1)).toEqual({ noisy: 1, quiet: 0 });
  });
});
