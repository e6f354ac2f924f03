import { isDatabaseUnavailable } from './database-errors';

/** When a {@link WriteBatcher} sends what it has queued. */
export interface WriteBatchOptions {
  /** How long the first queued write waits for others, in ms. 0 sends every write alone. */
  windowMs: number;
  /** A batch this large is sent at once, without waiting out the window. */
  maxItems: number;
}

interface Queued<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for one kind of write (docs/leases.md, "Group commit"): writes queued within a
 * short window go to the database as ONE statement, so the database pays one commit per batch
 * instead of one per write. `send` gets the batch and answers one result per item, in order;
 * each caller's promise settles with its own item's result. When `send` fails because the
 * database refused the statement (bad data in one row, a deadlock), each item is sent again
 * alone, so one row that cannot be written fails only its own item. When the database could not
 * be reached or the connection broke (the outcome is unknown), every item of the batch gets that
 * error, which is not the same as a lost lease: each caller re-reads what landed
 * (docs/leases.md, "Ambiguous commits").
 *
 * The batcher holds no state a crash could lose that the callers do not also hold: each
 * caller awaits its own write. `flush` sends what is queued at once and waits for every batch
 * in flight, for a graceful shutdown.
 */
export class WriteBatcher<T, R> {
  private queue: Queued<T, R>[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly send: (items: T[]) => Promise<R[]>,
    private readonly options: WriteBatchOptions,
  ) {}

  /** Queues `item`; settles with its result once its batch is written. */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.options.windowMs <= 0 || this.queue.length >= this.options.maxItems) {
        this.sendQueued();
      } else {
        this.timer ??= setTimeout(() => this.sendQueued(), this.options.windowMs);
      }
    });
  }

  /** Sends what is queued now and waits until every batch sent so far has settled. */
  async flush(): Promise<void> {
    this.sendQueued();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Writes queued, not yet sent. */
  get pending(): number {
    return this.queue.length;
  }

  private sendQueued(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    const sent = this.sendBatch(batch).finally(() => this.inFlight.delete(sent));
    this.inFlight.add(sent);
  }

  private async sendBatch(batch: Queued<T, R>[]): Promise<void> {
    let results: R[];
    try {
      results = await this.send(batch.map((queued) => queued.item));
      if (results.length !== batch.length) {
        throw new Error(`a batch of ${batch.length} writes answered ${results.length} results`);
      }
    } catch (error) {
      if (batch.length > 1 && !isDatabaseUnavailable(error)) {
        await Promise.all(batch.map((queued) => this.sendBatch([queued])));
        return;
      }
      for (const queued of batch) queued.reject(error);
      return;
    }
    batch.forEach((queued, i) => queued.resolve(results[i]));
  }
}
