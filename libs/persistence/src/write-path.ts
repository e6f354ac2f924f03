import { QueryResultRow } from 'pg';
import { TaskLease } from './claimed-task';
import { Queryable } from './database';
import { FencedStatement } from './sql/fenced-write.sql';
import { storableJson } from './storable-text';
import { WriteBatchOptions, WriteBatcher } from './write-batcher';

/**
 * Sends one kind of fenced write for a claim: the row its statement returned when the fence
 * (and guard) held, or undefined when it missed.
 */
export type FencedSend<C extends string, R> = (
  lease: TaskLease,
  values: Readonly<Record<C, unknown>>,
) => Promise<R | undefined>;

/** One queued write of a batch: whose claim, and its values by name. */
interface Queued {
  lease: TaskLease;
  values: Readonly<Record<string, unknown>>;
}

/**
 * How the group-committable writes reach the database, decided once, when it is built
 * (docs/leases.md, "Group commit"): with a window, each kind of write has a {@link WriteBatcher}
 * and goes as one batch statement per window; without one (`windowMs` 0, or no options), each
 * write is its row-by-row statement. Not a batch of one: that costs more than the row-by-row
 * statement (bench/batch-of-one.bench.ts), so a repository that never groups writes does not pay
 * for the grouping.
 */
export class WritePath {
  private readonly batchers: { flush(): Promise<void> }[] = [];
  private readonly batching: WriteBatchOptions | undefined;

  constructor(
    private readonly db: Queryable,
    options: WriteBatchOptions | undefined,
  ) {
    this.batching = options && options.windowMs > 0 ? options : undefined;
  }

  /** Whether writes are grouped (a window was given). */
  get batched(): boolean {
    return this.batching !== undefined;
  }

  /** The sender of `statement`'s writes, on this path. */
  sender<C extends string, R extends QueryResultRow = QueryResultRow>(
    statement: FencedStatement<C>,
  ): FencedSend<C, R> {
    if (!this.batching) {
      return async (lease, values) => {
        const params = statement.columns.map((column) => values[column]);
        const rows = await this.db.query<R>(statement.single, [
          lease.taskId,
          lease.token,
          ...params,
        ]);
        return rows[0];
      };
    }
    const batcher = new WriteBatcher<Queued, R | undefined>(
      (items) => this.sendBatch<R>(statement.batched, items),
      this.batching,
    );
    this.batchers.push(batcher);
    return (lease, values) => batcher.submit({ lease, values });
  }

  /** Sends every queued write now and waits for all in flight (graceful shutdown). */
  async flush(): Promise<void> {
    await Promise.all(this.batchers.map((batcher) => batcher.flush()));
  }

  /**
   * One statement for the batch; per item, its returned row when it passed its fence. Matched
   * by claim (task and token): two claims of one task in a batch (a stale item beside the row's
   * new claim) are told apart.
   *
   * Batches are sent as unnamed statements, so Postgres plans each for its own size. A named
   * (prepared) one gets a generic plan after five runs, which cannot know how many rows the
   * array or JSON parameter holds: for a 500-row terminal batch over arrays it joined them by a
   * nested loop over every live lease (`tasks_leased_idx`), 249,500 rows compared and dropped,
   * and the burn-down's finishes cost twice the database CPU (docs/benchmarks.md, "What the
   * profiles showed"). Planning a batch costs well under a millisecond.
   */
  private async sendBatch<R extends QueryResultRow>(
    sql: string,
    items: readonly Queued[],
  ): Promise<(R | undefined)[]> {
    const rows = items.map(({ lease, values }) => ({
      id: lease.taskId,
      token: lease.token,
      ...values,
    }));
    const landed = await this.db.query<R & { id: string; token: string }>(sql, [
      storableJson(rows),
    ]);
    const byClaim = new Map(landed.map((row) => [claimKey(row.id, row.token), row]));
    return items.map(({ lease }) => byClaim.get(claimKey(lease.taskId, lease.token)));
  }
}

/** A claim's identity in a batch's answer: its task and its lease token. */
function claimKey(taskId: string, token: string): string {
  return `${taskId} ${token}`;
}
