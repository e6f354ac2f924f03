// Guards against an attempt outliving its lease (docs/leases.md, "Attempt deadlines"): a chain
// of connects and calls, each within its own timeout, is cut at the attempt's one deadline,
// computed from a real claim's database times, before the lease ends and before a submit it
// could no longer record reaches the upstream.
import {
  AttemptDeadlineError,
  Contract,
  Phase,
  PermanentTaskError,
  TaskErrorCode,
  TransientTaskError,
} from '@app/common';
import type { ToolsetConfig } from '@app/config';
import { ClaimedTask, TaskLeaseRepository } from '@app/persistence';
import {
  AttemptDeadline,
  attemptDeadlineMs,
  localLeaseEndMs,
} from '../../apps/poller/src/running/attempt-deadline';
import { useTestDatabase } from '../helpers/db';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import { insertTasks } from '../helpers/tasks';
import { waitUntil } from '../helpers/wait';
import {
  NATIVE,
  closePools,
  httpServer,
  registry,
  startPool,
  tagStats,
  taskContext,
} from './driver-harness.helper';

const LEASE_MS = 3000;
// Each connect (initialize) takes 1.5 s, well within its 10 s timeout; a native submit over
// HTTP chains two of them before its call, so the chain outlives the 3 s lease. The timeouts are
// far above the lease so that only the deadline can cut the chain: with 2.5 s, a connect slowed
// by a loaded machine timed out on its own first.
const SLOW_INITIALIZE_MS = 1500;

const t = useTestDatabase();
let leases: TaskLeaseRepository;
const deadlines: AttemptDeadline[] = [];

beforeAll(async () => {
  leases = new TaskLeaseRepository(t.db);
});
afterEach(async () => {
  for (const deadline of deadlines.splice(0)) deadline.dispose();
  await closePools();
});
// The demo server a test starts stops after it (docs/testing.md, "Processes go through a fixture").
useProcesses({ perTest: true });

/** One claimed row with a LEASE_MS lease: the attempt's times come from this claim. */
async function claimOne(): Promise<ClaimedTask> {
  await insertTasks(t.db, 1);
  const [claim] = await leases.claim({
    workerId: 'w1',
    limit: 1,
    phases: [Phase.Submit],
    leaseMs: LEASE_MS,
    deadWorkerAfterMs: 15_000,
  });
  return claim;
}

function deadlineOf(claim: ClaimedTask): AttemptDeadline {
  const deadline = new AttemptDeadline(
    new AbortController().signal,
    attemptDeadlineMs(claim, LEASE_MS),
  );
  deadlines.push(deadline);
  return deadline;
}

/** When `signal` aborts, on this process's clock (undefined until it has). */
function abortTime(signal: AbortSignal): () => number | undefined {
  let at: number | undefined;
  signal.addEventListener('abort', () => (at = Date.now()), { once: true });
  return () => at;
}

/**
 * The attempt was cut by its deadline, and so while the claim's lease was live. Causal, not
 * timed: the deadline's own timer fired (not before the deadline, with its error), and the
 * deadline lies before the lease's end as this process reckons it from the claim's database
 * times, which is never later than the real end (docs/leases.md, "Attempt deadlines"). How soon
 * after the timer the rejection and a query arrive is the loaded machine's business: asking the
 * database whether the lease was still live then (within the 100 ms margin of a 3 s lease)
 * failed on a slow host.
 */
function expectCutByDeadline(
  claim: ClaimedTask,
  deadline: AttemptDeadline,
  cutAt: number | undefined,
): void {
  const deadlineMs = attemptDeadlineMs(claim, LEASE_MS);
  expect(deadline.signal.reason).toBeInstanceOf(AttemptDeadlineError);
  // Timers keep whole milliseconds: one may fire in the millisecond before its due time.
  expect(cutAt).toBeGreaterThanOrEqual(deadlineMs - 1);
  expect(deadlineMs).toBeLessThan(localLeaseEndMs(claim));
}

async function rejection(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('the attempt ended without being cut by its deadline');
}

it('cuts a native submit waiting for its second connect: nothing sent, lease still live', async () => {
  const url = (await startDemoServer(['--slow-initialize-ms', String(SLOW_INITIALIZE_MS)])).url;
  const server = {
    ...httpServer(url, [NATIVE]),
    protocolVersion: '2025-11-25' as const,
    connectTimeoutMs: 10_000,
    callTimeoutMs: 10_000,
  };
  const claim = await claimOne();
  const deadline = deadlineOf(claim);
  const cutAt = abortTime(deadline.signal);
  const pool = startPool(server);
  const tag = `deadline-${claim.id}`;
  const ctx = taskContext(server, NATIVE, { tag, duration_ms: 60_000 }, undefined, {
    signal: deadline.signal,
  });

  const error = await rejection(registry(pool).forToolset(NATIVE).submit(ctx));

  expectCutByDeadline(claim, deadline, cutAt());
  // Not sent: the runner releases it as an unsent submit, so the next claimer submits once.
  expect(error).toBeInstanceOf(TransientTaskError);
  expect((error as Error).message).toMatch(
    /submit not sent: .*cut short by the attempt's deadline/,
  );
  // The task session the attempt stopped waiting for connects on its own; once it has, a call
  // still queued behind it would have been sent. None was.
  await pool.taskSession('demo');
  expect((await tagStats(pool, tag)).submits ?? 0).toBe(0);
});

it('cuts a call still running at the deadline as maybe sent, and cancels it upstream', async () => {
  const url = (await startDemoServer()).url;
  // demo_slow holds its call open for the whole job: a call slower than the lease.
  const slow: ToolsetConfig = {
    name: 'slow-submit',
    server: 'demo',
    contract: Contract.Ordinary,
    submitTool: 'demo_slow',
    statusTool: 'demo_status',
    cancelTool: 'demo_cancel',
    retryOnCrash: false,
  };
  // The session is made before the claim: its connect may take seconds on a loaded machine
  // (a 1 s bound failed there), and it is not what this test cuts.
  const server = { ...httpServer(url, [slow]), connectTimeoutMs: 10_000, callTimeoutMs: 20_000 };
  const pool = startPool(server);
  await pool.session('demo');
  const claim = await claimOne();
  const deadline = deadlineOf(claim);
  const cutAt = abortTime(deadline.signal);
  const tag = `deadline-call-${claim.id}`;
  const ctx = taskContext(server, slow, { tag, duration_ms: 60_000 }, undefined, {
    signal: deadline.signal,
  });

  const error = await rejection(registry(pool).forToolset(slow).submit(ctx));

  expectCutByDeadline(claim, deadline, cutAt());
  expect(error).toBeInstanceOf(PermanentTaskError);
  expect((error as PermanentTaskError).code).toBe(TaskErrorCode.OutcomeUncertain);
  expect((error as Error).message).toMatch(/cut short by the attempt's deadline/);
  // The upstream saw the call once, and the cut cancelled it (notifications/cancelled).
  const stats = await waitUntil(async () => {
    const seen = await tagStats(pool, tag);
    return seen.cancelled === true ? seen : undefined;
  }, 'the cut call cancelled upstream');
  expect(stats.submits).toBe(1);
});
