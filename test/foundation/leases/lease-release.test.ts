// Guards against a released row making a pending cancel wait out its backoff, or an answer
// stored during a lease wait out the poll interval, and against a claim taking more rows of one
// server than that server has room for on the claiming worker.
import { Phase, TaskSnapshot, TaskStatus } from '@app/common';
import {
  ClaimedTask,
  TaskInputRepository,
  TaskLeaseRepository,
  TaskRepository,
  WriteOutcome,
} from '@app/persistence';
import { useTestDatabase } from '../../helpers/db';
import { insertTasks } from '../../helpers/tasks';

const t = useTestDatabase();
let leases: TaskLeaseRepository;

beforeAll(async () => {
  leases = new TaskLeaseRepository(t.db);
});
afterEach(async () => {
  await t.db.query(`DELETE FROM tasks`);
});

async function claimAll(room?: Map<string, number>, limit = 10): Promise<ClaimedTask[]> {
  return leases.claim({
    workerId: 'w1',
    limit,
    phases: [Phase.Submit, Phase.Poll, Phase.Cancel],
    leaseMs: 60_000,
    deadWorkerAfterMs: 15_000,
    serverRoom: room,
  });
}

/** Seconds from the database's now until the row is due (negative or 0: due now). */
async function dueInS(id: string): Promise<number> {
  const [row] = await t.db.query<{ s: string }>(
    `SELECT extract(epoch FROM next_attempt_at - now()) AS s FROM task_rows WHERE id = $1`,
    [id],
  );
  return Number(row.s);
}

describe('a cancel requested while the row is leased', () => {
  const releases: [string, (claim: ClaimedTask) => Promise<void>][] = [
    ['a transient error', (c) => leases.releaseAfterError(c.lease, 'boom', 60_000)],
    ['an unsent submit', (c) => leases.releaseUnsentSubmit(c.lease, 'refused', 60_000)],
    ['an overflow give-back', (c) => leases.releaseAfter(c.lease, 60_000)],
  ];

  it.each(releases)('makes the row due at once after %s', async (_, release) => {
    const [id] = await insertTasks(t.db, 1, { status: 'working' });
    const [claim] = await claimAll();
    // The API's cancel on a leased row: records the request, keeps the lease.
    expect((await new TaskRepository(t.db).requestCancel('user-1', id)).kind).toBe('accepted');
    await release(claim);
    expect(await dueInS(id)).toBeLessThanOrEqual(0);
    const [again] = await claimAll();
    expect(again.phase).toBe(Phase.Cancel);
  });

  const lateAnswers: [string, (claim: ClaimedTask) => Promise<WriteOutcome>][] = [
    [
      'a terminal answer',
      (c) =>
        leases.finish(
          c.lease,
          {
            status: TaskStatus.Completed,
            result: { value: { late: true }, preview: null, truncated: false },
          },
          true,
        ),
    ],
    [
      'a still-working answer',
      (c) => leases.applyPoll(c.lease, { status: TaskStatus.Working }, 60_000),
    ],
  ];

  it.each(lateAnswers)('discards %s of a poll that returns after the cancel', async (_, write) => {
    const [id] = await insertTasks(t.db, 1, { status: 'working' });
    const [claim] = await claimAll();
    expect(claim.phase).toBe(Phase.Poll);
    expect((await new TaskRepository(t.db).requestCancel('user-1', id)).kind).toBe('accepted');
    // The poll's answer arrives after the request: it must not end or reschedule the task.
    expect(await write(claim)).toBe('cancel_pending');
    const [row] = await t.db.query<{ status: string; result: unknown; lease_token: string | null }>(
      `SELECT status, result, lease_token FROM task_rows WHERE id = $1`,
      [id],
    );
    expect(row).toEqual({ status: 'working', result: null, lease_token: null });
    expect(await dueInS(id)).toBeLessThanOrEqual(0);
    const [again] = await claimAll();
    expect(again.phase).toBe(Phase.Cancel);
  });

  it('still waits out the backoff without a cancel request', async () => {
    const [id] = await insertTasks(t.db, 1, { status: 'working' });
    const [claim] = await claimAll();
    await leases.releaseAfterError(claim.lease, 'boom', 60_000);
    expect(await dueInS(id)).toBeGreaterThan(40);
  });
});

describe('answers stored while the row is leased (docs/leases.md, "The lease table")', () => {
  const QUESTION = { requests: { confirm: { method: 'elicitation/create', params: {} } } };

  async function askedAndClaimed(): Promise<{ id: string; claim: ClaimedTask }> {
    const [id] = await insertTasks(t.db, 1, { status: 'input_required' });
    const [claim] = await claimAll();
    return { id, claim };
  }

  it("make the holder's poll release due at once, not after its interval", async () => {
    const { id, claim } = await askedAndClaimed();
    const stored = await new TaskInputRepository(t.db).add('user-1', 'thread-1', id, {
      confirm: { action: 'accept' },
    });
    expect(stored).not.toBeNull();
    const snapshot: TaskSnapshot = { status: TaskStatus.InputRequired, inputRequired: QUESTION };
    expect(await leases.applyPoll(claim.lease, snapshot, 60_000)).toBe('applied');
    expect(await dueInS(id)).toBeLessThanOrEqual(0);
    // The next claim reads the answer and starts the flag over: its own release waits again.
    const [again] = await claimAll();
    expect(again.inputResponses?.confirm).toBeDefined();
    await leases.applyPoll(again.lease, snapshot, 60_000);
    expect(await dueInS(id)).toBeGreaterThan(40);
  });

  it('leave the release at its interval when none came', async () => {
    const { id, claim } = await askedAndClaimed();
    const snapshot: TaskSnapshot = { status: TaskStatus.InputRequired, inputRequired: QUESTION };
    await leases.applyPoll(claim.lease, snapshot, 60_000);
    expect(await dueInS(id)).toBeGreaterThan(40);
  });
});

describe('the claim bounded per server', () => {
  it("takes no more of a server's rows than its room, and fills the rest from others", async () => {
    await insertTasks(t.db, 5, { status: 'working', server: 'crowded', dueInMs: -2000 });
    await insertTasks(t.db, 5, { status: 'working', server: 'roomy', dueInMs: -1000 });
    const claimed = await claimAll(
      new Map([
        ['crowded', 1],
        ['roomy', 3],
      ]),
      4,
    );
    const per = (server: string): number => claimed.filter((c) => c.server === server).length;
    expect(per('crowded')).toBe(1);
    // The candidates were locked in due order (all five crowded rows first), so this claim
    // leaves roomy's rows for the next one rather than over-filling crowded.
    expect(claimed.length).toBeLessThanOrEqual(4);
    const next = await claimAll(
      new Map([
        ['crowded', 0],
        ['roomy', 3],
      ]),
      3,
    );
    expect(next.map((c) => c.server)).toEqual(['roomy', 'roomy', 'roomy']);
  });

  it('bounds a server missing from the room map by the limit only', async () => {
    await insertTasks(t.db, 3, { status: 'working', server: 'unknown' });
    expect(await claimAll(new Map([['other', 1]]), 3)).toHaveLength(3);
  });
});

describe('a remote handle after the lease expired', () => {
  const handle = { remoteTaskId: 'job_1', sessionId: null };

  it('lands while the token is still ours, and not once another claim took the row', async () => {
    const [id] = await insertTasks(t.db, 1, { status: 'queued' });
    // A zero-length lease: expired the moment it was taken, with nobody else claiming yet.
    const [expired] = await leases.claim({
      workerId: 'w1',
      limit: 1,
      phases: [Phase.Submit],
      leaseMs: 0,
      deadWorkerAfterMs: 15_000,
    });
    await expect(leases.recordSubmitted(expired.lease, handle, undefined, 1000)).rejects.toThrow();
    expect(await leases.recordSubmittedIfStillOurs(expired.lease, handle, undefined, 1000)).toBe(
      true,
    );
    const [row] = await t.db.query<{ remote_task_id: string; lease_token: string | null }>(
      `SELECT remote_task_id, lease_token FROM task_rows WHERE id = $1`,
      [id],
    );
    expect(row).toEqual({ remote_task_id: 'job_1', lease_token: null });

    const [other] = await insertTasks(t.db, 1, { status: 'queued' });
    const [first] = await leases.claim({
      workerId: 'w1',
      limit: 1,
      phases: [Phase.Submit],
      leaseMs: 0,
      deadWorkerAfterMs: 15_000,
    });
    expect(first.id).toBe(other);
    const [second] = await claimAll();
    expect(second.id).toBe(other);
    expect(await leases.recordSubmittedIfStillOurs(first.lease, handle, undefined, 1000)).toBe(
      false,
    );
  });
});
