/**
 * One lease-engine process for the burn-down benchmark: claim → no-op → complete, until a claim
 * finds nothing due. Configured by environment (it is spawned by lease-engine.bench.ts):
 * DATABASE_URL, BURN_MODE (`batched` | `per-row`), BURN_SLOTS, BURN_BATCH, BURN_FAIR (`1`: the
 * fair-share claim). The claim is the shipped one (claim.sql.ts through TaskLeaseRepository).
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import { Phase, TaskSnapshot, TaskStatus } from '@app/common';
import { ClaimedTask, Database, TaskLease, TaskLeaseRepository } from '@app/persistence';
import { nextParentMessage, runWorker, send } from '../lib/ipc';
import { Signal } from '../lib/signal';

const DONE: TaskSnapshot = { status: TaskStatus.Completed };
// Long enough that no lease can expire during a run: a lost lease here would be a bug.
const LEASE_MS = 120_000;

interface Counters {
  processed: number;
  lost: number;
  /** Wall time inside the claim and the completion statements (where a slow run went). */
  claimMs: number;
  claims: number;
  finishMs: number;
  finishes: number;
}

runWorker(async () => {
  const mode = process.env.BURN_MODE ?? 'batched';
  const slots = Number(process.env.BURN_SLOTS ?? 1000);
  const batch = Number(process.env.BURN_BATCH ?? 500);
  const pool = new Pool({
    connectionString: process.env.DATABASE_URL,
    max: mode === 'per-row' ? 8 : 3,
    application_name: `bench-lease-${mode}`,
    // jit=off as on the apps' connections (libs/persistence/src/data-source.ts).
    options: '-c jit=off',
  });
  // An idle client's lost connection is a pool 'error' event: without a listener it ends the run.
  pool.on('error', () => undefined);
  const db = new Database(pool);
  const leases = new TaskLeaseRepository(db);
  const workerId = `bench-${process.pid}`;
  const request = {
    workerId,
    phases: [Phase.Poll],
    leaseMs: LEASE_MS,
    deadWorkerAfterMs: 30_000,
    // BURN_FAIR=1: the fair-share claim (docs/leases.md, "Fair share"), every principal weight 1.
    fairShare: process.env.BURN_FAIR === '1' ? { weights: new Map<string, number>() } : undefined,
  };
  const claim = (limit: number): Promise<ClaimedTask[]> => leases.claim({ ...request, limit });
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
  const timedClaim = async (limit: number): Promise<ClaimedTask[]> => {
    const started = performance.now();
    const tasks = await claim(limit);
    counters.claimMs += performance.now() - started;
    counters.claims++;
    return tasks;
  };
  if (mode === 'per-row') await perRow(timedClaim, leases, slots, batch, counters);
  else await batched(timedClaim, new TaskLeaseRepository(db), slots, batch, counters);
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

  /** Claims until a claim finds nothing due; each claimed task goes to `start`. */
  async claimAll(
    claim: (limit: number) => Promise<ClaimedTask[]>,
    start: (task: ClaimedTask) => void,
  ): Promise<void> {
    for (;;) {
      const free = Math.min(this.batch, this.slots - this.held);
      if (free <= 0) {
        await this.hasRoom.wait();
        continue;
      }
      const tasks = await claim(free);
      if (tasks.length === 0) return;
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
 * Claims batches sized to the free slots while the previous batch's completion is in flight
 * (two loops, one connection each), and ends finished rows with one fenced statement per batch.
 */
async function batched(
  claim: (limit: number) => Promise<ClaimedTask[]>,
  batches: TaskLeaseRepository,
  slots: number,
  batch: number,
  counters: Counters,
): Promise<void> {
  const room = new Slots(slots, batch);
  let claiming = true;
  const finished: TaskLease[] = [];
  const hasFinished = new Signal();

  const claimer = async (): Promise<void> => {
    await room.claimAll(claim, (task) => {
      void noop(task).then((lease) => {
        finished.push(lease);
        hasFinished.fire();
      });
    });
    claiming = false;
    hasFinished.fire();
  };

  const completer = async (): Promise<void> => {
    while (claiming || room.held > 0) {
      if (finished.length === 0) {
        await hasFinished.wait();
        continue;
      }
      const leases = finished.splice(0, batch);
      const started = performance.now();
      const outcome = await batches.finishMany(leases, DONE);
      counters.finishMs += performance.now() - started;
      counters.finishes++;
      counters.processed += outcome.applied.length;
      counters.lost += outcome.lost.length;
      room.release(leases.length);
    }
  };

  await Promise.all([claimer(), completer()]);
}

/** The engine as first written: one fenced UPDATE (one commit) per finished row. */
async function perRow(
  claim: (limit: number) => Promise<ClaimedTask[]>,
  leases: TaskLeaseRepository,
  slots: number,
  batch: number,
  counters: Counters,
): Promise<void> {
  const room = new Slots(slots, batch);
  const inFlight = new Set<Promise<void>>();
  await room.claimAll(claim, (task) => {
    const item = noop(task)
      .then((lease) => leases.finish(lease, DONE))
      .then(
        () => void counters.processed++,
        () => void counters.lost++,
      )
      .finally(() => {
        inFlight.delete(item);
        room.release(1);
      });
    inFlight.add(item);
  });
  await Promise.all(inFlight);
}
