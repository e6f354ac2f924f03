import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SETTINGS, Settings } from '@app/config';
import { PeriodicRun } from '@app/lifecycle';
import { FleetRepository, WorkerRepository } from '@app/persistence';
import { PeriodicJob } from './periodic-job';

// 500 rows per statement keep each DELETE to a few milliseconds on the completed_at index, and
// the pause between batches leaves the claim and the API room even on a large first run.
export const RETENTION_BATCH_ROWS = 500;
const RETENTION_PAUSE_MS = 50;
/** Every retention job runs at start and then this often. */
export const RETENTION_INTERVAL_MS = 10 * 60_000;
// A `workers` row silent this long is history: every poller start adds one, so without pruning
// the table grows forever. An hour keeps recently stopped pollers visible to operators; a row
// that still pins a non-terminal task stays until that task ends (leases.md, "Workers").
export const WORKER_PRUNE_AFTER_MS = 60 * 60_000;

/**
 * Deletes with `deleteBatch` (at most `rows` per statement) until a batch comes back short or
 * `stopped()` says so, pausing between batches; returns how many rows went. The shape every
 * retention job shares: short statements, so a large first run never holds long locks, and
 * several pollers running it at once share the rows (SKIP LOCKED).
 */
export async function deleteInBatches(
  deleteBatch: (rows: number) => Promise<number>,
  stopped: () => boolean,
): Promise<number> {
  let total = 0;
  while (!stopped()) {
    const deleted = await deleteBatch(RETENTION_BATCH_ROWS);
    total += deleted;
    if (deleted < RETENTION_BATCH_ROWS) break;
    await new Promise((resolve) => setTimeout(resolve, RETENTION_PAUSE_MS));
  }
  return total;
}

/**
 * The schedule every retention job shares: a pass at start and then every
 * {@link RETENTION_INTERVAL_MS} on a {@link PeriodicRun}, started and stopped by the poller's
 * lifecycle. A failed pass is logged and tried again at the next interval; `stopped` (true
 * before the start and from the stop on) ends a pass's batches early.
 */
export class RetentionSchedule {
  private readonly run: PeriodicRun;
  private running = false;

  constructor(pass: () => Promise<unknown>, log: PinoLogger, failure: string) {
    this.run = new PeriodicRun(
      () =>
        pass().then(
          () => undefined,
          (error: unknown) => log.warn({ err: error }, failure),
        ),
      RETENTION_INTERVAL_MS,
    );
  }

  get stopped(): boolean {
    return !this.running;
  }

  start(): void {
    this.running = true;
    this.run.start();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.run.stop();
  }
}

/**
 * Deletes terminal tasks completed more than RETENTION_DAYS ago and prunes dead `workers` rows
 * that pin nothing, on a {@link RetentionSchedule} (at start, then every ten minutes).
 */
@Injectable()
export class RetentionJob implements PeriodicJob {
  readonly name = 'retention';
  private readonly schedule: RetentionSchedule;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly fleet: FleetRepository,
    private readonly workers: WorkerRepository,
    private readonly log: PinoLogger,
  ) {
    this.schedule = new RetentionSchedule(() => this.purge(), log, 'retention run failed');
  }

  start(): void {
    this.schedule.start();
  }

  stop(): Promise<void> {
    return this.schedule.stop();
  }

  private async purge(): Promise<void> {
    await this.workers.prune(WORKER_PRUNE_AFTER_MS);
    const days = this.settings.retention.days;
    const deleted = await deleteInBatches(
      (rows) => this.fleet.deleteExpiredBatch(days, rows),
      () => this.schedule.stopped,
    );
    if (deleted > 0) this.log.info({ deleted, days }, 'retention');
  }
}
