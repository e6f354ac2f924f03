import { TaskSnapshot } from '@app/common';
import { TaskLease } from './claimed-task';
import { Queryable, jsonParam } from './database';
import { FINISH_MANY_SQL } from './sql/finish-many.sql';

/** What a batched fenced write did: the rows it landed, and the leases found lost. */
export interface BatchOutcome {
  applied: string[];
  lost: TaskLease[];
}

/**
 * Batched fenced writes: many claimed rows per statement, each still fenced by its own token
 * and lease expiry. Used where per-row commits would cap throughput (docs/benchmarks.md).
 */
export class TaskBatchRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Ends every row of `leases` with `snapshot` (a terminal status) in one statement, like
   * `TaskLeaseRepository.finish(lease, snapshot)` for each. Rows whose lease was lost are
   * returned in `lost` and left untouched; never retry them.
   */
  async finishMany(leases: readonly TaskLease[], snapshot: TaskSnapshot): Promise<BatchOutcome> {
    if (leases.length === 0) return { applied: [], lost: [] };
    const rows = await this.db.query<{ id: string }>(
      FINISH_MANY_SQL,
      [
        leases.map((lease) => lease.taskId),
        leases.map((lease) => lease.token),
        snapshot.status,
        snapshot.result !== undefined,
        jsonParam(snapshot.result?.value),
        snapshot.result?.preview ?? null,
        snapshot.result?.truncated ?? false,
        jsonParam(snapshot.resultArtifact),
        snapshot.progress !== undefined,
        jsonParam(snapshot.progress),
        snapshot.error?.code ?? null,
        snapshot.error?.message ?? null,
      ],
      'mcp_tasks_finish_many',
    );
    const applied = rows.map((row) => row.id);
    const landed = new Set(applied);
    return { applied, lost: leases.filter((lease) => !landed.has(lease.taskId)) };
  }
}
