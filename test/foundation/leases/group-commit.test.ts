// Group commit keeps the fence row by row (leases.md, "Group commit"): concurrent poll results and
// terminal writes go to Postgres as one statement, yet a row whose lease was stolen is not
// written and its own item hears "lease lost", a pending cancel still wins, the batch ends rows
// exactly as the row-by-row writes do, and a statement the database refuses is written again row by
// row so only the bad row fails.
import { LeaseLostError, Phase, TaskErrorCode, TaskSnapshot, TaskStatus } from '@app/common';
import {
  ClaimedTask,
  Database,
  Queryable,
  TaskDeadlineRepository,
  TaskLeaseRepository,
  TaskRepository,
} from '@app/persistence';
import { createTestDatabase, TestDatabase } from '../../helpers/db';
import { insertTasks } from '../../helpers/tasks';

describe('group commit of fenced writes', () => {
  let t: TestDatabase;
  /** Every statement the batched repository sent, in order. */
  let sent: string[];
  let batched: TaskLeaseRepository;
  let single: TaskLeaseRepository;
  let tasks: TaskRepository;

  beforeAll(async () => {
    t = await createTestDatabase();
    const counting: Queryable & Pick<Database, 'transaction'> = {
      query: (sql, params, name) => {
        sent.push(sql);
        return t.db.query(sql, params, name);
      },
      transaction: (fn) => t.db.transaction(fn),
    };
    // A window long enough that every write of a test is queued before the first batch leaves.
    batched = new TaskLeaseRepository(counting, { windowMs: 200, maxItems: 1000 });
    single = new TaskLeaseRepository(t.db);
    tasks = new TaskRepository(t.db);
  });
  beforeEach(async () => {
    // Each test claims every due row, so none may be left over from the one before.
    await t.db.query(`DELETE FROM tasks`);
    sent = [];
  });
  afterAll(async () => {
    await t.drop();
  });

  async function claimAll(ids: string[]): Promise<ClaimedTask[]> {
    const claims = await single.claim({
      workerId: 'w1',
      limit: ids.length,
      phases: [Phase.Poll],
      leaseMs: 60_000,
      deadWorkerAfterMs: 15_000,
    });
    expect(claims).toHaveLength(ids.length);
    return ids.map((id) => claims.find((c) => c.id === id)!);
  }

  const COLUMNS = `status, progress, input_required, error_code, error_message, result,
    result_preview, poll_count, consecutive_errors, lease_token, lease_owner,
    next_attempt_at IS NULL AS not_due, completed_at IS NOT NULL AS completed`;
  /** A consumer's cancel, as the API's POST …/cancel makes it (insertTasks' rows belong to user-1). */
  async function consumerCancel(id: string): Promise<void> {
    expect((await tasks.requestCancel('user-1', id)).kind).toBe('accepted');
  }

  const row = async (id: string) =>
    (await t.db.query(`SELECT ${COLUMNS} FROM task_rows WHERE id = $1`, [id]))[0];

  it('poll results: one statement, each row fenced by its own token', async () => {
    const ids = await insertTasks(t.db, 5, { status: 'working' });
    const [a, b, stolen, cancelled, reference] = await claimAll(ids);
    // Another worker took `stolen` after its lease expired (its new token written by hand: a real
    // takeover would wait out the lease); a consumer cancelled `cancelled`.
    await t.db.query(`UPDATE task_leases SET lease_token = gen_random_uuid() WHERE task_id = $1`, [
      stolen.id,
    ]);
    await consumerCancel(cancelled.id);
    const snapshot: TaskSnapshot = {
      status: TaskStatus.Working,
      progress: { current: 1, total: 2, message: 'half' },
    };

    const outcomes = await Promise.all(
      [a, b, stolen, cancelled].map((item) => batched.applyPoll(item.lease, snapshot, 5_000)),
    );
    await single.applyPoll(reference.lease, snapshot, 5_000);

    expect(outcomes).toEqual(['applied', 'applied', 'lease_lost', 'cancel_pending']);
    // One batch statement for the four; then one release attempt for each of the two misses.
    expect(sent.filter((sql) => sql.includes('jsonb_to_recordset'))).toHaveLength(1);
    expect(sent).toHaveLength(3);
    expect(await row(a.id)).toEqual(await row(reference.id));
    expect(await row(b.id)).toEqual(await row(reference.id));
    expect(await row(stolen.id)).toMatchObject({ poll_count: 0, progress: null });
    expect((await row(stolen.id)).lease_token).not.toBeNull();
    expect(await row(cancelled.id)).toMatchObject({ poll_count: 0, lease_token: null });
  });

  it('terminal writes: each row its own snapshot, ended as the row-by-row write ends it', async () => {
    const ids = await insertTasks(t.db, 6, { status: 'working' });
    const [done, failed, stolen, guarded, done1, failed1] = await claimAll(ids);
    // `stolen`'s lease has run out, set by hand rather than waited out.
    await t.db.query(
      `UPDATE task_leases SET lease_expires_at = now() - interval '1 s' WHERE task_id = $1`,
      [stolen.id],
    );
    await consumerCancel(guarded.id);
    const COMPLETED: TaskSnapshot = {
      status: TaskStatus.Completed,
      result: { value: { answer: 42 }, preview: '42', truncated: false },
    };
    const FAILED: TaskSnapshot = {
      status: TaskStatus.Failed,
      error: { code: TaskErrorCode.ProtocolError, message: 'bad answer' },
      progress: { current: 3, total: 4 },
    };

    const outcomes = await Promise.all([
      batched.finish(done.lease, COMPLETED, true),
      batched.finish(failed.lease, FAILED),
      batched.finish(stolen.lease, FAILED).catch((error: unknown) => error),
      batched.finish(guarded.lease, COMPLETED, true),
    ]);
    await single.finish(done1.lease, COMPLETED, true);
    await single.finish(failed1.lease, FAILED);

    expect(outcomes.slice(0, 2)).toEqual(['applied', 'applied']);
    expect(outcomes[2]).toBeInstanceOf(LeaseLostError);
    expect(outcomes[3]).toBe('cancel_pending');
    expect(sent.filter((sql) => sql.includes('jsonb_to_recordset'))).toHaveLength(1);
    expect(await row(done.id)).toEqual(await row(done1.id));
    expect(await row(done.id)).toMatchObject({ status: 'completed', result: { answer: 42 } });
    expect(await row(failed.id)).toEqual(await row(failed1.id));
    expect(await row(failed.id)).toMatchObject({ status: 'failed', error_code: 'protocol_error' });
    expect(await row(stolen.id)).toMatchObject({ status: 'working', completed: false });
    expect(await row(guarded.id)).toMatchObject({ status: 'working', lease_token: null });
  });

  it('held-call renewals: one statement, each told renewed, cancel requested or lease lost', async () => {
    const ids = await insertTasks(t.db, 4, { status: 'working' });
    const [held, stolen, cancelled, overdue] = await claimAll(ids);
    // Another worker's token on `stolen`, written by hand as above.
    await t.db.query(`UPDATE task_leases SET lease_token = gen_random_uuid() WHERE task_id = $1`, [
      stolen.id,
    ]);
    await consumerCancel(cancelled.id);
    // The deadline sweep asks for `overdue`'s cancel. Its deadline is set by hand, on the task
    // and its lease row: insertTasks has no toolset to take one from, as the API's submit does.
    await t.db.query(`UPDATE tasks SET deadline_at = now() WHERE id = $1`, [overdue.id]);
    await t.db.query(`UPDATE task_leases SET deadline_at = now() WHERE task_id = $1`, [overdue.id]);
    const swept = await new TaskDeadlineRepository(t.db).requestOverdueCancels(10);
    expect(swept.map((task) => task.id)).toEqual([overdue.id]);
    const expiry = async (id: string) =>
      (
        await t.db.query<{ ms: number }>(
          `SELECT extract(epoch FROM lease_expires_at - now()) * 1000 AS ms FROM task_rows
            WHERE id = $1`,
          [id],
        )
      )[0].ms;
    const stolenExpiry = Number(await expiry(stolen.id));

    const outcomes = await Promise.all([
      batched.renewWatchingCancel(held.lease, 600_000),
      batched.renewWatchingCancel(stolen.lease, 600_000).catch((error: unknown) => error),
      batched.renewWatchingCancel(cancelled.lease, 600_000),
      batched.renewWatchingCancel(overdue.lease, 600_000),
    ]);

    expect(outcomes[0]).toBe('renewed');
    expect(outcomes[1]).toBeInstanceOf(LeaseLostError);
    expect(outcomes[2]).toBe('cancel_requested');
    expect(outcomes[3]).toBe('deadline_cancel');
    expect(sent).toHaveLength(1);
    // Renewed: the lease now ends about 10 minutes out (it was claimed for one).
    expect(Number(await expiry(held.id))).toBeGreaterThan(500_000);
    expect(Number(await expiry(cancelled.id))).toBeGreaterThan(500_000);
    expect(Number(await expiry(stolen.id))).toBeLessThanOrEqual(stolenExpiry);
  });

  // docs/leases.md, "A call's end": a held call outlasting its lease in an outage goes on.
  it('a renewal lands past the lease while the row carries its token, in both forms', async () => {
    const ids = await insertTasks(t.db, 3, { status: 'working' });
    const [late, lateAlone, taken] = await claimAll(ids);
    // The leases ran out in an outage; nobody claimed `late` or `lateAlone` since, another
    // worker claimed `taken`.
    await t.db.query(
      `UPDATE task_leases SET lease_expires_at = now() - interval '1 s' WHERE task_id = ANY($1)`,
      [ids],
    );
    await t.db.query(`UPDATE task_leases SET lease_token = gen_random_uuid() WHERE task_id = $1`, [
      taken.id,
    ]);

    const outcomes = await Promise.all([
      batched.renewWatchingCancel(late.lease, 600_000),
      batched.renewWatchingCancel(taken.lease, 600_000).catch((error: unknown) => error),
    ]);
    const alone = await single.renewWatchingCancel(lateAlone.lease, 600_000);

    expect(outcomes[0]).toBe('renewed');
    expect(outcomes[1]).toBeInstanceOf(LeaseLostError);
    expect(alone).toBe('renewed');
    const left = await t.db.query<{ id: string; ms: number }>(
      `SELECT task_id AS id, extract(epoch FROM lease_expires_at - now()) * 1000 AS ms
         FROM task_leases WHERE task_id = ANY($1) ORDER BY task_id`,
      [ids],
    );
    const byId = new Map(left.map((row) => [row.id, Number(row.ms)]));
    expect(byId.get(late.id)).toBeGreaterThan(500_000);
    expect(byId.get(lateAlone.id)).toBeGreaterThan(500_000);
    expect(byId.get(taken.id)).toBeLessThan(0);
  });

  it('a batch the database refuses is sent again row by row: the bad row fails alone, never as a lost lease', async () => {
    const ids = await insertTasks(t.db, 2, { status: 'working' });
    const [fine, tooLong] = await claimAll(ids);
    // error_message is checked to at most 4,000 characters: the batch statement fails as a
    // whole, and its rows are then written one by one (docs/leases.md, "Group commit").
    const outcomes = await Promise.all([
      batched.finish(fine.lease, { status: TaskStatus.Completed }).catch((e: unknown) => e),
      batched
        .finish(tooLong.lease, {
          status: TaskStatus.Failed,
          error: { code: TaskErrorCode.ProtocolError, message: 'x'.repeat(5000) },
        })
        .catch((e: unknown) => e),
    ]);

    expect(outcomes[0]).toBe('applied');
    expect(await row(fine.id)).toMatchObject({ status: 'completed', completed: true });
    expect(outcomes[1]).toBeInstanceOf(Error);
    expect(outcomes[1]).not.toBeInstanceOf(LeaseLostError);
    expect(String(outcomes[1])).toMatch(/error_message_check/);
    // Nothing was lost: the bad row's lease is still held, so the attempt can record the error.
    expect((await row(tooLong.id)).lease_token).toBe(tooLong.lease.token);
  });
});
