import { Client } from 'pg';

// Reconnect backoff: a Postgres restart takes a few seconds; 10 s caps the latency it costs.
const RECONNECT_INITIAL_MS = 250;
const RECONNECT_MAX_MS = 10_000;

export interface ChannelListenerOptions {
  url: string;
  channel: string;
  appName: string;
  /** Each notification's payload; `null` after a reconnect (notifications meanwhile are lost). */
  onNotify: (payload: string | null) => void;
  onLost?: (error: unknown, retryInMs: number) => void;
  /** After each successful LISTEN (the first and every reconnect): notifications flow from now. */
  onListening?: () => void;
}

/**
 * LISTEN on one channel over a dedicated connection (a pooled one would drop the subscription
 * when returned), reopened with backoff when lost. Notifications only cut latency: every user
 * of this also polls, so a lost one costs a fallback interval, never an event.
 */
export class ChannelListener {
  private client?: Client;
  private stopped = true;
  private delayMs = RECONNECT_INITIAL_MS;
  private retry?: NodeJS.Timeout;
  private readonly lostClients = new WeakSet<Client>();

  constructor(private readonly options: ChannelListenerOptions) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.channel)) throw new Error('invalid channel name');
  }

  start(): void {
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
      connectionString: this.options.url,
      application_name: this.options.appName,
    });
    client.on('notification', (message) => this.options.onNotify(message.payload ?? ''));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.options.channel}`);
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
    if (wasDown) this.options.onNotify(null);
    this.options.onListening?.();
  }

  private lost(client: Client, error: unknown): void {
    if (this.lostClients.has(client)) return;
    this.lostClients.add(client);
    if (this.client === client) this.client = undefined;
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.options.onLost?.(error, this.delayMs);
    this.retry = setTimeout(() => void this.connect(), this.delayMs);
    this.retry.unref();
    this.delayMs = Math.min(this.delayMs * 2, RECONNECT_MAX_MS);
  }
}
