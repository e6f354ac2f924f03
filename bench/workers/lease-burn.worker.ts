/**
 * One lease-engine process for the burn-down benchmark: claim → no-op → finish, until a claim
 * finds nothing due, through TaskLeaseRepository as the poller builds it. Configured by
 * environment (it is spawned by lease-engine.bench.ts): DATABASE_URL, BURN_MODE (`shipped`: group
 * commit as shipped | `per-row`: every write alone), BURN_SLOTS, BURN_BATCH (the claim's limit),
 * BURN_FAIR (`0`: the due-order claim instead of the fair-share claim the poller ships).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'pg';
import { Phase, TaskSnapshot, TaskStatus } from '@app/common';
import {
  ClaimOutcome,
  ClaimedTask,
  Database,
  TaskLease,
  TaskLeaseRepository,
} from '@app/persistence';
import { nextParentMessage, runWorker, send } from '../lib/ipc';
import { Signal } from '../lib/signal';

const DONE: TaskSnapshot = { status: TaskStatus.Completed };
// Long enough that no lease can expire during a run: a lost lease here would be a bug.
const LEASE_MS = 120_000;
/** The poller's least time between two claims (CLAIM_MIN_GAP_MS's default). */
const CLAIM_GAP_MS = 20;

interface Counters {
  processed: number;
  lost: number;
  /** Wall time inside the claims, and from a task's start to its end written (summed). */
  claimMs: number;
  claims: number;
  finishMs: number;
  finishes: number;
}

runWorker(async () => {
  const mode = process.env.BURN_MODE ?? 'shipped';
  const slots = Number(process.env.BURN_SLOTS ?? 1000);
  const batch = Number(process.env.BURN_BATCH ?? 500);
  const pool = new Pool({
    connectionString: process.env.DATABASE_URL,
    // The poller's pool (DATABASE_POOL_SIZE's default).
    max: 10,
    application_name: `bench-lease-${mode}`,
    // jit=off as on the apps' connections (libs/persistence/src/data-source.ts).
    options: '-c jit=off',
  });
  // An idle client's lost connection is a pool 'error' event: without a listener it ends the run.
  pool.on('error', () => undefined);
  const db = new Database(pool);
  // Group commit as the poller ships it (WRITE_BATCH_WINDOW_MS, WRITE_BATCH_MAX defaults), or
  // every write alone (window 0).
  const leases = new TaskLeaseRepository(db, {
    windowMs: mode === 'per-row' ? 0 : 3,
    maxItems: 200,
  });
  const workerId = `bench-${process.pid}`;
  const request = {
    workerId,
    phases: [Phase.Poll],
    leaseMs: LEASE_MS,
    deadWorkerAfterMs: 30_000,
    // The fair-share claim (docs/leases.md, "Fair share"; on by default, as CLAIM_FAIR_SHARE),
    // every principal weight 1; BURN_FAIR=0: the due-order claim.
    fairShare: process.env.BURN_FAIR === '0' ? undefined : { weights: new Map<string, number>() },
  };
  const claim = (limit: number): Promise<ClaimOutcome> => leases.claimBatch({ ...request, limit });
  await db.query('SELECT 1');
  send({ type: 'ready' });
  await nextParentMessage('go');
  const startedAt = Date.now();
  const counters: Counters = {
    processed: 0,
    lost: 0,
    claimMs: 0,
    claims: 0,
    finishMs: 0,
    finishes: 0,
  };
  const timedClaim = async (limit: number): Promise<ClaimOutcome> => {
    const started = performance.now();
    const outcome = await claim(limit);
    counters.claimMs += performance.now() - started;
    counters.claims++;
    return outcome;
  };
  await burn(timedClaim, leases, slots, batch, counters);
  const endedAt = Date.now();
  await pool.end();
  send({ type: 'done', startedAt, endedAt, ...counters });
});

/** The no-op driver: each item runs on its own (no tick barrier), and does nothing. */
async function noop(task: ClaimedTask): Promise<TaskLease> {
  await Promise.resolve();
  return task.lease;
}

/**
 * The worker's slots: claims take at most `batch` rows and only the room that is free, and a
 * finished row gives its slot back. Both engines below claim through it.
 */
class Slots {
  held = 0;
  private readonly hasRoom = new Signal();

  constructor(
    private readonly slots: number,
    private readonly batch: number,
  ) {}

  /**
   * Claims until a claim finds nothing due; each claimed task goes to `start`. An empty claim
   * that met another process's claim (`contended`) is not the end: as the poller's engine does,
   * it claims again once that claim has had the claim gap to commit.
   */
  async claimAll(
    claim: (limit: number) => Promise<ClaimOutcome>,
    start: (task: ClaimedTask) => void,
  ): Promise<void> {
    for (;;) {
      const free = Math.min(this.batch, this.slots - this.held);
      if (free <= 0) {
        await this.hasRoom.wait();
        continue;
      }
      const { tasks, contended } = await claim(free);
      if (tasks.length === 0) {
        if (!contended) return;
        await sleep(CLAIM_GAP_MS);
        continue;
      }
      this.held += tasks.length;
      for (const task of tasks) start(task);
    }
  }

  release(count: number): void {
    this.held -= count;
    this.hasRoom.fire();
  }
}

/**
 * Each claimed task runs on its own and ends with `finish`, as the poller's attempt does; with
 * group commit the ends of concurrent items go as one statement per window (the batcher), with
 * BURN_MODE=per-row each is its own statement (one commit per row, the engine as first written).
 */
async function burn(
  claim: (limit: number) => Promise<ClaimOutcome>,
  leases: TaskLeaseRepository,
  slots: number,
  batch: number,
  counters: Counters,
): Promise<void> {
  const room = new Slots(slots, batch);
  const inFlight = new Set<Promise<void>>();
  await room.claimAll(claim, (task) => {
    const started = performance.now();
    const item = noop(task)
      .then((lease) => leases.finish(lease, DONE))
      .then(
        () => void counters.processed++,
        () => void counters.lost++,
      )
      .finally(() => {
        counters.finishMs += performance.now() - started;
        counters.finishes++;
        inFlight.delete(item);
        room.release(1);
      });
    inFlight.add(item);
  });
  await Promise.all(inFlight);
}
