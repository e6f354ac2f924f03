import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Settings, SETTINGS } from '@app/config';
import { PeriodicRun } from '@app/metrics';
import { EventRepository } from '@app/persistence';
import { deleteInBatches, RETENTION_INTERVAL_MS } from '../retention.job';

/**
 * Deletes events older than EVENT_RETENTION_HOURS (with their finished deliveries and attempts;
 * an event a delivery still retries stays until the delivery ends). The same shape as the tasks'
 * retention job: batches on a {@link PeriodicRun}, started and stopped by the poller's lifecycle.
 */
@Injectable()
export class EventRetentionJob {
  private readonly run: PeriodicRun;
  private stopped = true;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly events: EventRepository,
    private readonly log: PinoLogger,
  ) {
    this.run = new PeriodicRun(
      () =>
        this.purge().then(
          () => undefined,
          (error: unknown) => this.log.warn({ err: error }, 'event retention failed'),
        ),
      RETENTION_INTERVAL_MS,
    );
  }

  start(): void {
    this.stopped = false;
    this.run.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.run.stop();
  }

  /** One full pass; returns how many events it deleted. Exposed for tests and operators. */
  async purge(): Promise<number> {
    const hours = this.settings.retention.eventHours;
    const deleted = await deleteInBatches(
      (rows) => this.events.deleteExpiredBatch(hours, rows),
      () => this.stopped,
    );
    if (deleted > 0) this.log.info({ deleted, hours }, 'event retention');
    return deleted;
  }
}
