import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Client } from 'pg';
import { Settings } from '@app/config';
import { POLLER_SETTINGS } from './poller.tokens';

/** The channel the tasks table's triggers notify (payload: submit | cancel; ours: release). */
export const DUE_CHANNEL = 'mcp_tasks_due';
// Reconnect backoff: a Postgres restart takes a few seconds; 10 s caps the latency it costs.
const RECONNECT_INITIAL_MS = 250;
const RECONNECT_MAX_MS = 10_000;

/**
 * LISTEN on a dedicated connection (a pooled one would lose the subscription when returned).
 * Notifications only cut latency: a lost one is covered by the earliest-due timer and the
 * fallback interval, so a broken connection is simply reopened with backoff, and a reconnect
 * itself counts as a wake-up (notifications sent meanwhile are gone).
 */
@Injectable()
export class NotifyListenerService {
  private client?: Client;
  private stopped = true;
  private delayMs = RECONNECT_INITIAL_MS;
  private retry?: NodeJS.Timeout;
  private listener: (payload: string) => void = () => undefined;
  /** Clients whose loss was already handled: `error`, `end` and a failed connect may all fire. */
  private readonly lostClients = new WeakSet<Client>();

  constructor(
    @Inject(POLLER_SETTINGS) private readonly settings: Settings,
    private readonly log: PinoLogger,
  ) {}

  /** Starts listening; `onNotify` gets each payload (and `reconnect` after an outage). */
  start(onNotify: (payload: string) => void): void {
    this.listener = onNotify;
    this.stopped = false;
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({
      connectionString: this.settings.database.url,
      application_name: 'mcp-task-gateway-poller-listen',
    });
    client.on('notification', (message) => this.listener(message.payload ?? ''));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${DUE_CHANNEL}`);
    } catch (error) {
      this.lost(client, error);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    const wasDown = this.delayMs > RECONNECT_INITIAL_MS;
    this.client = client;
    this.delayMs = RECONNECT_INITIAL_MS;
    if (wasDown) {
      this.log.info('notification listener reconnected');
      this.listener('reconnect');
    }
  }

  /** Schedules one reconnect per lost client, whichever of error/end/connect failure came first. */
  private lost(client: Client, error: unknown): void {
    if (this.lostClients.has(client)) return;
    this.lostClients.add(client);
    if (this.client === client) this.client = undefined;
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.log.warn({ err: error, retryInMs: this.delayMs }, 'notification listener lost');
    this.retry = setTimeout(() => void this.connect(), this.delayMs);
    this.retry.unref();
    this.delayMs = Math.min(this.delayMs * 2, RECONNECT_MAX_MS);
  }
}
