import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { ListenConnection, TASKS_DUE_CHANNEL } from '@app/persistence';

/**
 * The claim loop's wake-ups from Postgres. Notifications only cut latency: a lost one is covered
 * by the earliest-due timer and the fallback interval, and a reconnect itself counts as a
 * wake-up (notifications sent meanwhile are gone).
 */
@Injectable()
export class NotifyListenerService {
  private unsubscribe?: () => Promise<void>;

  constructor(
    private readonly connection: ListenConnection,
    private readonly log: PinoLogger,
  ) {}

  /** Starts listening; `onNotify` gets each payload (and `reconnect` after an outage). */
  start(onNotify: (payload: string) => void): void {
    this.unsubscribe = this.connection.subscribe(TASKS_DUE_CHANNEL, {
      onNotify: (payload) => {
        if (payload === null) this.log.info('notification listener reconnected');
        onNotify(payload ?? 'reconnect');
      },
      onLost: (error, retryInMs) =>
        this.log.warn({ err: error, retryInMs }, 'notification listener lost'),
    });
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
  }
}
