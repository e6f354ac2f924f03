/**
 * One lease-engine process for the burn-down benchmark: the poller's own claim loop
 * (`ClaimLoopService` on `LeasedWorkEngine`, bounded by `ServerSlots`, with settings parsed from
 * the poller's variables) whose attempt does nothing but end its task through
 * `TaskLeaseRepository.finish`, the write the poller's attempt ends with. It runs from the
 * parent's `go` to its `stop` (sent once no row is left), and reports the time of its last end
 * written. Configured by environment (it is spawned by lease-engine.bench.ts): DATABASE_URL, and
 * the poller's own WORKER_SLOTS, CLAIM_FAIR_SHARE, WRITE_BATCH_WINDOW_MS.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { TaskSnapshot, TaskStatus } from '@app/common';
import { parseMcpServers, parseSettings } from '@app/config';
import { ClaimedBatch } from '@app/leasing';
import { GatewayMetrics } from '@app/metrics';
import { ClaimedTask, Database, FleetRepository, TaskLeaseRepository } from '@app/persistence';
import { ClaimLoopService } from '../../apps/poller/src/claiming/claim-loop.service';
import { RescueHold } from '../../apps/poller/src/claiming/rescue-hold';
import { ServerSlots } from '../../apps/poller/src/claiming/server-slots';
import { TaskRunnerService } from '../../apps/poller/src/running/task-runner.service';
import { nextParentMessage, runWorker, send } from '../lib/ipc';

const DONE: TaskSnapshot = { status: TaskStatus.Completed };
/** The server of the benchmark's rows (bench/lib/load-tasks.ts). */
const SERVER = 'demo';

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
  const settings = parseSettings({
    ...process.env,
    // Long enough that no lease can expire during a run: a lost lease here would be a bug.
    LEASE_MS: '120000',
  });
  const pool = new Pool({
    connectionString: settings.database.url,
    // The poller's pool: DATABASE_POOL_SIZE (10 unless the benchmark's environment sets it).
    max: settings.database.poolSize,
    application_name: 'bench-lease',
    // jit=off as on the apps' connections (libs/persistence/src/data-source.ts).
    options: '-c jit=off',
  });
  // An idle client's lost connection is a pool 'error' event: without a listener it ends the run.
  pool.on('error', () => undefined);
  const db = new Database(pool);
  // Built as PersistenceModule builds it for the poller: group commit at the poller's window.
  const leases = new TaskLeaseRepository(db, {
    windowMs: settings.worker.writeBatchWindowMs,
    maxItems: settings.worker.writeBatchMax,
  });
  // One server whose maxConcurrentCalls is the worker's slots: every slot can run a row.
  const servers = parseMcpServers(
    JSON.stringify({
      mcpServers: {
        [SERVER]: {
          url: 'http://127.0.0.1:9/mcp',
          maxConcurrentCalls: settings.worker.slots,
          taskToolsets: [{ name: 'demo-ordinary', contract: 'sync-call', tool: 'noop' }],
        },
      },
    }),
    {},
    settings.lease.ms,
  );
  /** When this worker's last task end was written (local epoch ms). */
  let lastEndAt = 0;
  const counters: Counters = {
    processed: 0,
    lost: 0,
    claimMs: 0,
    claims: 0,
    finishMs: 0,
    finishes: 0,
  };
  // The attempt: nothing but the task's end, written as the poller's attempt writes it.
  const runner = {
    async run(task: ClaimedTask): Promise<{ nextDueInMs?: number }> {
      const started = performance.now();
      await Promise.resolve();
      try {
        await leases.finish(task.lease, DONE);
        counters.processed++;
        lastEndAt = Date.now();
      } catch {
        counters.lost++;
      }
      counters.finishMs += performance.now() - started;
      counters.finishes++;
      return {};
    },
  };
  const log = {
    info: (obj: object, msg: string) => console.error(msg, obj),
    warn: (obj: object, msg: string) => console.error(msg, obj),
  };
  const metrics = new GatewayMetrics(new Registry());
  const loop = new (class extends ClaimLoopService {
    /** The shipped claim, timed. */
    override async claim(limit: number): Promise<ClaimedBatch<ClaimedTask>> {
      const started = performance.now();
      const batch = await super.claim(limit);
      counters.claimMs += performance.now() - started;
      counters.claims++;
      return batch;
    }
  })(
    settings,
    `bench-${process.pid}`,
    new ServerSlots(
      settings.worker.slots,
      new Map(servers.servers.map((s) => [s.name, s.maxConcurrentCalls])),
      metrics,
    ),
    new FleetRepository(db),
    leases,
    new RescueHold(settings.lease.ms / 2),
    // Only `run` is called on the runner (ClaimLoopService.run).
    runner as unknown as TaskRunnerService,
    metrics,
    log as unknown as PinoLogger,
    servers,
  );
  await db.query('SELECT 1');
  send({ type: 'ready' });
  await nextParentMessage('go');
  const startedAt = Date.now();
  const stop = nextParentMessage('stop');
  loop.start(settings.worker.deadAfterMs);
  await stop;
  await loop.engine.stopClaiming();
  await loop.engine.drain(Infinity);
  const endedAt = Math.max(startedAt, lastEndAt);
  await pool.end();
  send({ type: 'done', startedAt, endedAt, ...counters });
});
