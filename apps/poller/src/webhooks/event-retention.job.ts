import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Settings } from '@app/config';
import { EventRepository } from '@app/persistence';
import { WEBHOOK_SETTINGS } from './webhooks.tokens';

// Same batch discipline as the tasks' retention job: short DELETEs with pauses, so a large first
// run never holds long locks; several pollers share the work (SKIP LOCKED).
const BATCH_ROWS = 500;
const PAUSE_MS = 50;
const INTERVAL_MS = 10 * 60_000;
// First run shortly after start, not at once: boot is busy enough.
const FIRST_RUN_MS = 30_000;

/**
 * Deletes events older than EVENT_RETENTION_HOURS (with their finished deliveries and attempts;
 * an event a delivery still retries stays until the delivery ends).
 */
@Injectable()
export class EventRetentionJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = true;

  constructor(
    @Inject(WEBHOOK_SETTINGS) private readonly settings: Settings,
    private readonly events: EventRepository,
    private readonly log: PinoLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.stopped = false;
    this.schedule(FIRST_RUN_MS);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One full pass; returns how many events it deleted. Exposed for tests and operators. */
  async purge(): Promise<number> {
    const hours = this.settings.retention.eventHours;
    let total = 0;
    while (!this.stopped) {
      const deleted = await this.events.deleteExpiredBatch(hours, BATCH_ROWS);
      total += deleted;
      if (deleted < BATCH_ROWS) break;
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
    if (total > 0) this.log.info({ deleted: total, hours }, 'event retention');
    return total;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.purge()
        .then(() => undefined)
        .catch((error: unknown) => this.log.warn({ err: error }, 'event retention failed'))
        .finally(() => {
          this.running = undefined;
          this.schedule(INTERVAL_MS);
        });
    }, delayMs);
    this.timer.unref();
  }
}
