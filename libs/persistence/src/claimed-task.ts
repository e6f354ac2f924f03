import { Phase } from '@app/common';
import { TaskRow, toTaskRow } from './task-row';

/** The right to write about one task row: fenced by `token`, valid until the lease expires. */
export interface TaskLease {
  taskId: string;
  token: string;
}

/** A row as the claim returned it, with what the caller needs to act and to measure. */
export interface ClaimedTask extends TaskRow {
  lease: TaskLease;
  phase: Phase;
  /** The previous lease expired: a crashed or stalled worker's claim taken over. */
  rescued: boolean;
  dueLagSeconds: number;
  dbNow: Date;
}

export function toClaimedTask(row: Record<string, unknown>): ClaimedTask {
  return {
    ...toTaskRow(row),
    lease: { taskId: row.id as string, token: row.lease_token as string },
    phase: row.phase as Phase,
    rescued: row.rescued as boolean,
    dueLagSeconds: Number(row.due_lag_seconds),
    dbNow: row.db_now as Date,
  };
}
