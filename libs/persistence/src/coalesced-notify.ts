import { Queryable } from './database';

/**
 * A NOTIFY sent after the writes it announces have committed, one for many: at most one is in
 * flight, and every write that commits while it is, or within `minGapMs` after the last one was
 * sent, gets the next one, sent once that gap has passed. So each write is followed by a NOTIFY
 * sent after its commit, a write after a quiet spell notifies at once, and a stream of writes
 * costs at most one statement per gap, not one each. The NOTIFY is a transaction of its own,
 * outside the writes' (docs/leases.md, "Wake-ups": a notifying transaction holds a database-wide
 * lock through its commit).
 *
 * A NOTIFY that fails is reported to `onError` and not retried: listeners treat a lost
 * notification as latency (their fallback timers cover it), and the write it announces has
 * committed either way.
 * @example const due = new CoalescedNotify(db, 'mcp_tasks_due', 'submit', (e) => log.warn(e), 20);
 *          await insertTheTask(); due.send();
 */
export class CoalescedNotify {
  private running = false;
  private again = false;
  /** When the last NOTIFY was sent (performance.now()); -Infinity before the first. */
  private lastSentAt = -Infinity;

  constructor(
    private readonly db: Queryable,
    private readonly channel: string,
    private readonly payload: string,
    private readonly onError: (error: unknown) => void,
    /** Least time between two NOTIFYs' sends; 0 sends the next as soon as one is answered. */
    private readonly minGapMs = 0,
  ) {}

  /** Call after the write has committed. Returns at once; never throws. */
  send(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.run();
  }

  /** Sends until no write came while the last NOTIFY was in flight or waiting; never rejects. */
  private async run(): Promise<void> {
    do {
      const wait = this.lastSentAt + this.minGapMs - performance.now();
      // Unref'd: a wake-up still waiting when the process exits is latency lost, not a write.
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref());
      this.again = false;
      this.lastSentAt = performance.now();
      try {
        await this.db.query(`SELECT pg_notify($1, $2)`, [this.channel, this.payload]);
      } catch (error) {
        this.onError(error);
      }
    } while (this.again);
    this.running = false;
  }
}
