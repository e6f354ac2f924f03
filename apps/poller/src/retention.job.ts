import { Inject, Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { PinoLogger } from 'nestjs-pino';
import { Settings } from '@app/config';
import { FleetRepository, WorkerRepository } from '@app/persistence';
import { POLLER_SETTINGS } from './poller.tokens';

// 500 rows per statement keep each DELETE to a few milliseconds on the completed_at index, and
// the pause between batches leaves the claim and the API room even on a large first run.
export const RETENTION_BATCH_ROWS = 500;
const RETENTION_PAUSE_MS = 50;
// A `workers` row silent this long is history: every poller start adds one, so without pruning
// the table grows forever. An hour keeps recently stopped pollers visible to operators; a row
// that still pins a non-terminal task stays until that task ends (leases.md, "Workers").
export const WORKER_PRUNE_AFTER_MS = 60 * 60_000;

/**
 * Deletes terminal tasks completed more than RETENTION_DAYS ago, in small batches with short
 * pauses, so it never holds long locks or blocks the claim, and prunes dead `workers` rows that
 * pin nothing. Runs once shortly after start and then every ten minutes; several pollers running
 * it at once share the rows (SKIP LOCKED).
 */
@Injectable()
export class RetentionJob {
  private running?: Promise<void>;
  private stopped = true;

  constructor(
    @Inject(POLLER_SETTINGS) private readonly settings: Settings,
    private readonly fleet: FleetRepository,
    private readonly workers: WorkerRepository,
    private readonly log: PinoLogger,
  ) {}

  start(): void {
    this.stopped = false;
    this.trigger();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  @Cron(CronExpression.EVERY_10_MINUTES)
  trigger(): void {
    if (this.stopped || this.running) return;
    this.running = this.purge()
      .catch((error: unknown) => this.log.warn({ err: error }, 'retention run failed'))
      .finally(() => (this.running = undefined));
  }

  private async purge(): Promise<void> {
    await this.workers.prune(WORKER_PRUNE_AFTER_MS);
    let total = 0;
    while (!this.stopped) {
      const deleted = await this.fleet.deleteExpiredBatch(
        this.settings.retention.days,
        RETENTION_BATCH_ROWS,
      );
      total += deleted;
      if (deleted < RETENTION_BATCH_ROWS) break;
      await new Promise((resolve) => setTimeout(resolve, RETENTION_PAUSE_MS));
    }
    if (total > 0)
      this.log.info({ deleted: total, days: this.settings.retention.days }, 'retention');
  }
}
