// Guards against a deadlock between a batch of fenced writes and a thread deletion: the batch
// locked lease rows in the order its items arrived, the deletion in task ID order, so over the
// same rows each could hold one the other waited for (Postgres aborted one: the API's 500).
// docs/leases.md, "The lease table": every statement that locks several lease rows does so in ID order.
import { Phase, TaskSnapshot, TaskStatus } from '@app/common';
import { TaskLeaseRepository, TaskRepository } from '@app/persistence';
import { useTestDatabase } from '../../helpers/db';
import { insertTasks } from '../../helpers/tasks';
import { waitUntil } from '../../helpers/wait';

const t = useTestDatabase();
const ROWS = 40;
const SNAPSHOT: TaskSnapshot = { status: TaskStatus.Working };

/** Backends of this database waiting for a row or transaction lock. */
async function lockWaiters(): Promise<number> {
  const rows = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return rows[0].n;
}

it('a batch written in arrival order and a thread deletion over the same rows both finish', async () => {
  const ids = await insertTasks(t.db, ROWS, { status: 'working', threadId: 'doomed' });
  const single = new TaskLeaseRepository(t.db);
  const claims = await single.claim({
    workerId: 'w1',
    limit: ROWS,
    phases: [Phase.Poll],
    leaseMs: 60_000,
    deadWorkerAfterMs: 15_000,
  });
  expect(claims).toHaveLength(ROWS);
  const batched = new TaskLeaseRepository(t.db, { windowMs: 5_000, maxItems: ROWS });
  // The items arrive in descending task ID order: the opposite of the deletion's.
  const arrival = [...claims].sort((a, b) => (a.id < b.id ? 1 : -1));
  const middle = [...ids].sort()[ROWS / 2];

  // Both statements are held at the middle row, each having locked its half, then let go at once.
  const blocker = await t.db.pool.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM task_leases WHERE task_id = $1 FOR UPDATE', [middle]);
    const writes = Promise.allSettled(
      arrival.map((claim) => batched.applyPoll(claim.lease, SNAPSHOT, 5_000)),
    );
    const deletion = new TaskRepository(t.db).deleteThread('user-1', 'doomed').then(
      (hidden) => ({ hidden }),
      (error: unknown) => ({ error: String(error) }),
    );
    await waitUntil(
      async () => ((await lockWaiters()) >= 2 ? true : undefined),
      'the batch and the deletion both waiting on a lock',
      10_000,
    );
    await blocker.query('COMMIT');

    expect(await deletion).toEqual({ hidden: ROWS });
    const outcomes = await writes;
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
  } finally {
    blocker.release();
  }
  const left = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM tasks WHERE thread_deleted_at IS NULL`,
  );
  expect(left[0].n).toBe(0);
});
