import type { FailoverTimes } from '../../test/helpers/postgres-failover';
import { AuditRow } from './lease-audit.sql';
import { FaultEvent } from './fault-schedule';
import { DrivenTask } from './task-driver';

/** A task row at the end of the run, as the checker reads it. */
export interface FinalTask {
  id: string;
  status: string;
  error_code: string | null;
  error_message: string | null;
  remote_task_id: string | null;
  pinned_worker_id: string | null;
  cancel_requested_at: Date | null;
  submitted_at: Date | null;
  completed_at: Date | null;
}

export const FINAL_TASKS_SQL = `
SELECT id, status, error_code, error_message, remote_task_id, pinned_worker_id,
       cancel_requested_at, submitted_at, completed_at
  FROM tasks`;

/** An upstream job as the demo server's state file records it. */
export interface UpstreamJob {
  id: string;
  contract: 'ordinary' | 'tasks' | 'sync';
  args: { tag?: string };
  cancelledAt?: number;
}

/** Everything the invariant checker reads, gathered once the run has drained. */
export interface ChaosEvidence {
  driven: DrivenTask[];
  tasks: Map<string, FinalTask>;
  /** Audited UPDATEs per task ID, in commit order. */
  audit: Map<string, AuditRow[]>;
  faults: FaultEvent[];
  /** Submits per tag as counted by the HTTP demo servers (demo_stats `by_tag`). */
  submitsByTag: Map<string, number>;
  /** Cancel requests per tag as counted by the HTTP demo servers (demo_stats `by_tag`). */
  cancelsByTag?: Map<string, number>;
  /** The failover's steps, when the run injected one. */
  failover?: FailoverTimes;
  /** Jobs the HTTP demo servers know, from their state files. */
  upstreamJobs: UpstreamJob[];
  /** `${task_id} ${type}` pairs delivered to the receiver; undefined when webhooks are off. */
  webhooks?: { has(taskId: string, type: string): boolean; badSignatures: string[] };
  terminalChanges: string[];
  leaseMs: number;
}

/** Groups audit rows by task, keeping their order. */
export function groupAudit(rows: AuditRow[]): Map<string, AuditRow[]> {
  const byTask = new Map<string, AuditRow[]>();
  for (const row of rows) {
    const list = byTask.get(row.task_id) ?? [];
    list.push(row);
    byTask.set(row.task_id, list);
  }
  return byTask;
}

/** An audit row that is a claim: a fresh lease token replacing whatever was there. */
export function isClaim(row: AuditRow): boolean {
  return row.new_token !== null && row.new_token !== row.old_token;
}
