// Guards the lease engine's invariants with claimers in separate processes: no row is ever
// claimed twice while its lease lives, an expired claimer lands no write, expired leases are
// claimable again by the same claim statement.
import { Phase, TaskStatus } from '@app/common';
import { FleetRepository, TaskLeaseRepository } from '@app/persistence';
import { useTestDatabase } from '../../helpers/db';
import type { NodeProcess } from '../../helpers/node-process';
import { useProcesses } from '../../helpers/process-scope';
import { waitUntil } from '../../helpers/wait';
import { insertTasks } from '../../helpers/tasks';

const CLAIMER = 'test/fixtures/claimer.js';
const t = useTestDatabase();
// Each test's claimers stop after it, before the afterEach below empties the tables.
const processes = useProcesses({ perTest: true });

beforeAll(async () => {
  await t.db.query(
    `CREATE TABLE claim_log (task_id text NOT NULL, worker text NOT NULL, token uuid NOT NULL)`,
  );
});
afterEach(async () => {
  await t.db.query(`TRUNCATE claim_log`);
  await t.db.query(`DELETE FROM tasks`);
});

function claimer(mode: string, args: string[]): NodeProcess {
  return processes.node(CLAIMER, [mode, ...args], { DATABASE_URL: t.url });
}

it('four processes drain 20,000 due rows, each row claimed exactly once', async () => {
  const ids = await insertTasks(t.db, 20_000, { status: 'working' });
  const claimers = [1, 2, 3, 4].map((n) =>
    claimer('drain', ['--worker', `w${n}`, '--batch', '100']),
  );
  const summaries = await Promise.all(
    claimers.map(
      async (p) => JSON.parse(await p.waitForLine(/^\{/, 110_000)) as { claimed: number },
    ),
  );
  expect(summaries.reduce((sum, s) => sum + s.claimed, 0)).toBe(ids.length);
  const dupes = await t.db.query(
    `SELECT task_id FROM claim_log GROUP BY task_id HAVING count(*) > 1`,
  );
  expect(dupes).toEqual([]);
  const [{ n }] = await t.db.query<{ n: string }>(
    `SELECT count(DISTINCT task_id) AS n FROM claim_log`,
  );
  expect(Number(n)).toBe(ids.length);
  const [{ done }] = await t.db.query<{ done: string }>(
    `SELECT count(*) AS done FROM task_rows WHERE status = 'completed' AND lease_token IS NULL`,
  );
  expect(Number(done)).toBe(ids.length);
  // Every claimer took part: the work spread instead of serializing behind one lock.
  for (const s of summaries) expect(s.claimed).toBeGreaterThan(0);
});

it('a claimer paused past its lease (SIGSTOP) lands no write; the new owner does', async () => {
  const ids = await insertTasks(t.db, 5, { status: 'working' });
  const paused = claimer('hold', ['--worker', 'paused', '--batch', '5', '--lease-ms', '500']);
  const line = await paused.waitForLine(/^claimed /);
  expect(line.slice('claimed '.length).split(',').sort()).toEqual([...ids].sort());
  paused.child.kill('SIGSTOP');
  const leases = new TaskLeaseRepository(t.db);
  // The same claim statement recovers the rows once their lease has expired.
  const rescued = await waitUntil(
    async () => {
      const rows = await leases.claim({
        workerId: 'rescuer',
        limit: 10,
        phases: [Phase.Poll],
        leaseMs: 60_000,
        deadWorkerAfterMs: 15_000,
      });
      return rows.length > 0 ? rows : undefined;
    },
    'expired leases to be claimable',
    10_000,
  );
  expect(rescued.map((r) => r.id).sort()).toEqual([...ids].sort());
  expect(rescued.every((r) => r.rescued)).toBe(true);
  for (const row of rescued) {
    await leases.finish(row.lease, {
      status: TaskStatus.Completed,
      result: { value: 'rescuer', preview: null, truncated: false },
    });
  }
  paused.child.kill('SIGCONT');
  paused.child.stdin!.write('go\n');
  expect(await paused.waitForLine(/^applied /)).toBe('applied 0 lost 5');
  const rows = await t.db.query<{ result: unknown }>(`SELECT result FROM tasks`);
  expect(rows.map((r) => r.result)).toEqual([
    'rescuer',
    'rescuer',
    'rescuer',
    'rescuer',
    'rescuer',
  ]);
});

it('a live lease is not claimable; an expired one is, by the same statement', async () => {
  await insertTasks(t.db, 3, { status: 'working' });
  const leases = new TaskLeaseRepository(t.db);
  const request = { limit: 10, phases: [Phase.Poll], leaseMs: 60_000, deadWorkerAfterMs: 15_000 };
  const first = await leases.claim({ ...request, workerId: 'a' });
  expect(first).toHaveLength(3);
  expect(await leases.claim({ ...request, workerId: 'b' })).toEqual([]);
  await t.db.query(
    `UPDATE task_leases SET lease_expires_at = now() - interval '1 ms', next_attempt_at = now() - interval '1 ms'`,
  );
  const second = await leases.claim({ ...request, workerId: 'b' });
  expect(second.map((r) => r.id).sort()).toEqual(first.map((r) => r.id).sort());
  expect(new Set(second.map((r) => r.lease.token))).not.toEqual(
    new Set(first.map((r) => r.lease.token)),
  );
  await expect(leases.release(first[0].lease)).rejects.toThrow(/lease lost/);
  await leases.release(second[0].lease);
});

it('the earliest due time after a claim counts a row due since the claim began, not one before it', async () => {
  // Due 2 s ago: before a claim that began 1 s ago, so that claim left it (held, or its
  // server saturated); waking for it would spin.
  await insertTasks(t.db, 1, { status: 'working', dueInMs: -2_000 });
  const fleet = new FleetRepository(t.db);
  expect(await fleet.earliestDueMs(1_000)).toBeNull();
  // Due 500 ms ago: after that claim began, so it could not see it. Wake at once (0), where
  // asking only for future due times would have said "nothing" and left it to the fallback.
  await insertTasks(t.db, 1, { status: 'working', dueInMs: -500 });
  expect(await fleet.earliestDueMs(1_000)).toBe(0);
  expect(await fleet.earliestDueMs(0)).toBeNull();
  // A future due time is the time left until it.
  await insertTasks(t.db, 1, { status: 'working', dueInMs: 60_000 });
  const dueIn = await fleet.earliestDueMs(0);
  expect(dueIn).toBeGreaterThan(50_000);
  expect(dueIn).toBeLessThanOrEqual(60_000);
});

it('claims only as many rows as free slots, in due order', async () => {
  const late = await insertTasks(t.db, 2, { status: 'working', dueInMs: -1_000 });
  await insertTasks(t.db, 5, { status: 'working', dueInMs: -10 });
  await insertTasks(t.db, 5, { status: 'working', dueInMs: 60_000 });
  const leases = new TaskLeaseRepository(t.db);
  const rows = await leases.claim({
    workerId: 'a',
    limit: 2,
    phases: [Phase.Poll],
    leaseMs: 60_000,
    deadWorkerAfterMs: 15_000,
  });
  expect(rows.map((r) => r.id).sort()).toEqual([...late].sort());
  expect(rows.every((r) => r.dueLagSeconds >= 0.9)).toBe(true);
  const rest = await leases.claim({
    workerId: 'a',
    limit: 100,
    phases: [Phase.Poll],
    leaseMs: 60_000,
    deadWorkerAfterMs: 15_000,
  });
  expect(rest).toHaveLength(5);
});

// leases.md, "Rescues first": a row whose lease expired goes before older overdue rows, in the
// due-order claim and the fair-share claim alike, and within a server's room too.
describe.each([
  ['due order', undefined],
  ['fair share', { weights: new Map<string, number>() }],
])('rescues first (%s claim)', (_name, fairShare) => {
  const request = {
    phases: [Phase.Poll],
    leaseMs: 60_000,
    deadWorkerAfterMs: 15_000,
    fairShare,
  };

  /** Rows overdue by a minute, of several principals, and rows held by a worker that died. */
  async function seed(): Promise<string[]> {
    for (const userId of ['user-1', 'user-2', 'user-3']) {
      await insertTasks(t.db, 4, { status: 'working', dueInMs: -60_000, userId });
    }
    const held = await insertTasks(t.db, 2, { status: 'working', userId: 'user-1' });
    const leases = new TaskLeaseRepository(t.db);
    const first = await leases.claim({ ...request, workerId: 'dead', limit: 100 });
    expect(first).toHaveLength(14);
    // The dead worker's last two claims expire now; the rest go back overdue, unleased.
    await t.db.query(
      `UPDATE task_leases SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
                              next_attempt_at = now() - interval '60 s'
        WHERE NOT (task_id = ANY($1::text[]))`,
      [held],
    );
    await t.db.query(
      `UPDATE task_leases SET lease_expires_at = now() - interval '1 ms',
                              next_attempt_at = now() - interval '1 ms'
        WHERE task_id = ANY($1::text[])`,
      [held],
    );
    return held;
  }

  it('a claim with room for two takes the two expired leases, not the older overdue rows', async () => {
    const held = await seed();
    const rows = await new TaskLeaseRepository(t.db).claim({
      ...request,
      workerId: 'survivor',
      limit: 2,
    });
    expect(rows.map((r) => r.id).sort()).toEqual([...held].sort());
    expect(rows.every((r) => r.rescued)).toBe(true);
  });

  it("a server's room goes to the expired leases first", async () => {
    const held = await seed();
    const rows = await new TaskLeaseRepository(t.db).claim({
      ...request,
      workerId: 'survivor',
      limit: 10,
      serverRoom: new Map([['demo', 3]]),
    });
    expect(rows).toHaveLength(3);
    expect(
      rows
        .filter((r) => r.rescued)
        .map((r) => r.id)
        .sort(),
    ).toEqual([...held].sort());
  });

  it('never rescues a lease the claiming process still holds (docs/leases.md, "Rescues first")', async () => {
    const held = await seed();
    const tokens = await t.db.query<{ task_id: string; lease_token: string }>(
      `SELECT task_id, lease_token FROM task_leases WHERE task_id = ANY($1::text[]) ORDER BY task_id`,
      [held],
    );
    const [ours, theirs] = tokens;
    const rows = await new TaskLeaseRepository(t.db).claim({
      ...request,
      workerId: 'dead',
      limit: 2,
      heldTokens: [ours.lease_token],
    });
    // The other expired lease is rescued, and an overdue row fills the second place.
    expect(rows.filter((r) => r.rescued).map((r) => r.id)).toEqual([theirs.task_id]);
    expect(rows.map((r) => r.id)).not.toContain(ours.task_id);
    const [row] = await t.db.query<{ lease_token: string }>(
      `SELECT lease_token FROM task_leases WHERE task_id = $1`,
      [ours.task_id],
    );
    expect(row.lease_token).toBe(ours.lease_token);
  });

  it('in the hold after an outage, leaves the leases that ran out since, not those before (docs/leases.md, "Rescues after an outage")', async () => {
    const held = await seed();
    // One of the two leases ran out two minutes ago, before this worker last reached the
    // database; the other a moment ago, in the outage.
    await t.db.query(
      `UPDATE task_leases SET lease_expires_at = now() - interval '2 min' WHERE task_id = $1`,
      [held[0]],
    );
    const rows = await new TaskLeaseRepository(t.db).claim({
      ...request,
      workerId: 'survivor',
      limit: 3,
      minRescueAgeMs: 60_000,
    });
    expect(rows.filter((r) => r.rescued).map((r) => r.id)).toEqual([held[0]]);
    expect(rows.map((r) => r.id)).not.toContain(held[1]);
    // An overdue row took the place the held-back lease left.
    expect(rows).toHaveLength(3);
    const [spared] = await t.db.query<{ lease_owner: string }>(
      `SELECT lease_owner FROM task_leases WHERE task_id = $1`,
      [held[1]],
    );
    expect(spared.lease_owner).toBe('dead');
    // Once the hold is over, it is a rescue like any other.
    const after = await new TaskLeaseRepository(t.db).claim({
      ...request,
      workerId: 'survivor',
      limit: 1,
    });
    expect(after.map((r) => [r.id, r.rescued])).toEqual([[held[1], true]]);
  });
});
