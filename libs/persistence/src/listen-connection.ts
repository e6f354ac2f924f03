import { Client } from 'pg';
import { Channel, CHANNELS } from './channels';
import { DEFAULT_STATEMENT_TIMEOUT_MS, SESSION_OPTIONS, statementBounds } from './database';

// Reconnect backoff: a Postgres restart takes a few seconds; 10 s caps the latency it costs.
const RECONNECT_INITIAL_MS = 250;
const RECONNECT_MAX_MS = 10_000;

/** One user of the connection, on one channel. */
export interface ChannelSubscriber {
  /** Each notification's payload; `null` after a reconnect (notifications meanwhile are lost). */
  onNotify(payload: string | null): void;
  /**
   * After each LISTEN that covers its channel succeeded (the first and after every reconnect):
   * notifications flow from now.
   */
  onListening?(): void;
  /** The connection is lost (or could not be opened); the next try is in `retryInMs`. */
  onLost?(error: unknown, retryInMs: number): void;
}

export interface ListenConnectionOptions {
  url: string;
  appName: string;
  /** How long opening the connection may take; 10 s, as the pool's checkout. */
  connectTimeoutMs?: number;
  /**
   * The pool's statement bound (database.ts, `statementBounds`), and the liveness check's
   * interval: the open connection repeats its LISTEN this often, under the same bound. Default
   * {@link DEFAULT_STATEMENT_TIMEOUT_MS}.
   */
  statementTimeoutMs?: number;
}

/**
 * The process's one LISTEN connection, fanning each notification out to the subscribers of its
 * channel: however many channels and users a process has, it holds its pool plus this one
 * connection (docs/operations.md, "Database connection budget"). A dedicated client, since a
 * pooled one would drop its subscriptions when returned. It opens with the first subscriber,
 * closes after the last, and reopens with backoff when lost. Each loss reaches every subscriber
 * (`onLost`), and after the reconnect every subscriber hears `null` before any new notification:
 * what was sent meanwhile is gone, so each looks again. Notifications only cut latency: every
 * user of this also polls, so a lost one costs a fallback interval, never an event.
 *
 * A connection whose server vanished without closing it (a node lost, a partition) gives no
 * error, ever: it only stops delivering. So the open connection repeats its LISTEN every
 * `statementTimeoutMs`, under that bound too; one that goes unanswered counts as a loss like any
 * other, and a silent connection is replaced within twice the bound.
 */
export class ListenConnection {
  private readonly subscribers = new Map<Channel, Set<ChannelSubscriber>>();
  /** The open connection, set once its first LISTEN succeeded. */
  private client?: Client;
  private opening?: Promise<void>;
  private retry?: NodeJS.Timeout;
  /** The next liveness check of the open connection. */
  private check?: NodeJS.Timeout;
  private readonly timeoutMs: number;
  private delayMs = RECONNECT_INITIAL_MS;
  private readonly ended = new WeakSet<Client>();
  /** The connection each subscriber was last told `onListening` for. */
  private readonly toldOn = new WeakMap<ChannelSubscriber, Client>();

  constructor(private readonly options: ListenConnectionOptions) {
    this.timeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  }

  /**
   * Adds a subscriber to `channel` and opens the connection if it is the first. Returns its
   * unsubscribe, which closes the connection when it removes the last subscriber.
   */
  subscribe(channel: Channel, subscriber: ChannelSubscriber): () => Promise<void> {
    // The name is written into the LISTEN statement: only the channel list's names get there.
    if (!CHANNELS.includes(channel)) throw new Error('unknown channel');
    const set = this.subscribers.get(channel) ?? new Set<ChannelSubscriber>();
    this.subscribers.set(channel, set);
    set.add(subscriber);
    if (this.client) void this.listenMore(this.client);
    else if (!this.opening && !this.retry) this.opening = this.connect();
    let removed = false;
    return async () => {
      if (removed) return;
      removed = true;
      set.delete(subscriber);
      this.toldOn.delete(subscriber);
      if (set.size === 0 && this.subscribers.get(channel) === set) this.subscribers.delete(channel);
      if (this.subscribers.size === 0) await this.close();
    };
  }

  /** Ends the connection and forgets every subscriber (the process is shutting down). */
  async close(): Promise<void> {
    this.subscribers.clear();
    clearTimeout(this.retry);
    this.retry = undefined;
    clearTimeout(this.check);
    this.delayMs = RECONNECT_INITIAL_MS;
    const client = this.client;
    this.client = undefined;
    if (client) await this.end(client);
    // A connect in flight sees nobody subscribed and ends its client itself.
    await this.opening;
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.options.url,
      application_name: this.options.appName,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 10_000,
      ...statementBounds(this.timeoutMs),
      options: SESSION_OPTIONS,
    });
    client.on('notification', (message) => this.deliver(message.channel, message.payload ?? ''));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    let channels: Channel[];
    try {
      await client.connect();
      channels = await this.listenAll(client);
    } catch (error) {
      this.opening = undefined;
      this.lost(client, error);
      return;
    }
    this.opening = undefined;
    if (this.ended.has(client)) return;
    if (this.subscribers.size === 0) {
      await this.end(client);
      return;
    }
    const wasDown = this.delayMs > RECONNECT_INITIAL_MS;
    this.client = client;
    this.delayMs = RECONNECT_INITIAL_MS;
    this.checkLater(client);
    if (wasDown) for (const subscriber of this.all()) subscriber.onNotify(null);
    this.tell(client, channels);
    // Subscribed while the LISTEN ran: their channels may not be in it yet.
    if ([...this.subscribers.keys()].some((channel) => !channels.includes(channel)))
      void this.listenMore(client);
  }

  /** LISTENs every subscribed channel in one statement (LISTEN again on a channel is a no-op). */
  private async listenAll(client: Client): Promise<Channel[]> {
    const channels = [...this.subscribers.keys()];
    await client.query(channels.map((channel) => `LISTEN ${channel}`).join('; '));
    return channels;
  }

  /** A subscriber joined the open connection: LISTEN (again), then tell it. */
  private async listenMore(client: Client): Promise<void> {
    try {
      const channels = await this.listenAll(client);
      if (this.client === client) this.tell(client, channels);
    } catch (error) {
      this.lost(client, error);
    }
  }

  /**
   * The next liveness check of `client`: its LISTEN again, a no-op to the server (and what
   * `pg_stat_activity` keeps showing as its last statement). Unanswered within the bound, the
   * connection is lost.
   */
  private checkLater(client: Client): void {
    this.check = setTimeout(() => {
      this.listenAll(client).then(
        () => {
          if (this.client === client) this.checkLater(client);
        },
        (error: unknown) => this.lost(client, error),
      );
    }, this.timeoutMs);
    this.check.unref();
  }

  private tell(client: Client, channels: Channel[]): void {
    for (const channel of channels) {
      for (const subscriber of [...(this.subscribers.get(channel) ?? [])]) {
        if (this.toldOn.get(subscriber) === client) continue;
        this.toldOn.set(subscriber, client);
        subscriber.onListening?.();
      }
    }
  }

  private deliver(channel: string, payload: string): void {
    for (const subscriber of [...(this.subscribers.get(channel as Channel) ?? [])])
      subscriber.onNotify(payload);
  }

  private lost(client: Client, error: unknown): void {
    if (this.ended.has(client)) return;
    void this.end(client);
    if (this.client === client) {
      this.client = undefined;
      clearTimeout(this.check);
    }
    if (this.subscribers.size === 0) return;
    for (const subscriber of this.all()) subscriber.onLost?.(error, this.delayMs);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (this.subscribers.size > 0) this.opening = this.connect();
    }, this.delayMs);
    this.retry.unref();
    this.delayMs = Math.min(this.delayMs * 2, RECONNECT_MAX_MS);
  }

  /**
   * Ends `client`: with a goodbye to the server, cut after the bound when that goes unanswered
   * (a vanished server never acknowledges it). pg itself cuts a client whose statement still
   * waits, as a silent one's liveness check does.
   */
  private async end(client: Client): Promise<void> {
    this.ended.add(client);
    const cut = setTimeout(() => client.connection.stream.destroy(), this.timeoutMs);
    cut.unref();
    await client.end().catch(() => undefined);
    clearTimeout(cut);
  }

  private all(): ChannelSubscriber[] {
    return [...this.subscribers.values()].flatMap((set) => [...set]);
  }
}
