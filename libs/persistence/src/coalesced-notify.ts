import { Queryable } from './database';

/**
 * A NOTIFY sent after the writes it announces have committed, one for many: at most one is in
 * flight, and every write that commits while it is gets the next one. So each write is followed
 * by a NOTIFY sent after its commit, and a burst of writes costs two statements, not one each.
 * The NOTIFY is a transaction of its own, outside the writes' (docs/leases.md, "Wake-ups": a
 * notifying transaction holds a database-wide lock through its commit).
 *
 * A NOTIFY that fails is reported to `onError` and not retried: listeners treat a lost
 * notification as latency (their fallback timers cover it), and the write it announces has
 * committed either way.
 * @example const due = new CoalescedNotify(db, 'mcp_tasks_due', 'submit', (e) => log.warn(e));
 *          await insertTheTask(); due.send();
 */
export class CoalescedNotify {
  private running = false;
  private again = false;

  constructor(
    private readonly db: Queryable,
    private readonly channel: string,
    private readonly payload: string,
    private readonly onError: (error: unknown) => void,
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

  /** Sends until no write came while the last NOTIFY was in flight; never rejects. */
  private async run(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.db.query(`SELECT pg_notify($1, $2)`, [this.channel, this.payload]);
      } catch (error) {
        this.onError(error);
      }
    } while (this.again);
    this.running = false;
  }
}
