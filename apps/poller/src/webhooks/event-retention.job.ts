import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Settings, SETTINGS } from '@app/config';
import { EventRepository } from '@app/persistence';
import { PeriodicJob } from '../upkeep/periodic-job';
import { deleteInBatches, RetentionSchedule } from '../upkeep/retention.job';

/**
 * Deletes events older than EVENT_RETENTION_HOURS (with their finished deliveries and attempts;
 * an event a delivery still retries stays until the delivery ends). The same shape as the tasks'
 * retention job: batches on a {@link RetentionSchedule}.
 */
@Injectable()
export class EventRetentionJob implements PeriodicJob {
  readonly name = 'event-retention';
  private readonly schedule: RetentionSchedule;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly events: EventRepository,
    private readonly log: PinoLogger,
  ) {
    this.schedule = new RetentionSchedule(() => this.purge(), log, 'event retention failed');
  }

  start(): void {
    this.schedule.start();
  }

  stop(): Promise<void> {
    return this.schedule.stop();
  }

  /** One full pass; returns how many events it deleted. Exposed for tests and operators. */
  async purge(): Promise<number> {
    const hours = this.settings.retention.eventHours;
    const deleted = await deleteInBatches(
      (rows) => this.events.deleteExpiredBatch(hours, rows),
      () => this.schedule.stopped,
    );
    if (deleted > 0) this.log.info({ deleted, hours }, 'event retention');
    return deleted;
  }
}
