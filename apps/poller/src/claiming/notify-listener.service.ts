import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SETTINGS, Settings } from '@app/config';
import { ChannelListener, TASKS_DUE_CHANNEL } from '@app/persistence';

/**
 * The claim loop's wake-ups from Postgres. Notifications only cut latency: a lost one is covered
 * by the earliest-due timer and the fallback interval, and a reconnect itself counts as a
 * wake-up (notifications sent meanwhile are gone).
 */
@Injectable()
export class NotifyListenerService {
  private listener?: ChannelListener;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly log: PinoLogger,
  ) {}

  /** Starts listening; `onNotify` gets each payload (and `reconnect` after an outage). */
  start(onNotify: (payload: string) => void): void {
    this.listener = new ChannelListener({
      url: this.settings.database.url ?? '',
      channel: TASKS_DUE_CHANNEL,
      appName: 'mcp-task-gateway-poller-listen',
      onNotify: (payload) => {
        if (payload === null) this.log.info('notification listener reconnected');
        onNotify(payload ?? 'reconnect');
      },
      onLost: (error, retryInMs) =>
        this.log.warn({ err: error, retryInMs }, 'notification listener lost'),
    });
    this.listener.start();
  }

  async stop(): Promise<void> {
    await this.listener?.stop();
  }
}
