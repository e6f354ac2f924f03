import { Database, Queryable } from './database';
import { TASKS_DUE_CHANNEL } from './channels';
import {
  DELIVERY_STATUS_SQL,
  FORCE_FAIL_TASK_SQL,
  LIST_ACTIONS_SQL,
  LIST_DEAD_DELIVERIES_SQL,
  LIST_STUCK_TASKS_SQL,
  RECORD_ACTION_SQL,
  REDRIVE_TASK_SQL,
  REPLAY_DELIVERY_SQL,
  TASK_WRITE_REFUSAL_SQL,
} from './sql/operator.sql';

/** Who ran an operator command, and through which door. */
export interface OperatorActor {
  /** The principal: the API user ID, or the CLI's `--actor` (default: the OS user). */
  readonly name: string;
  readonly via: 'cli' | 'api';
}

/** The operator actions that write; reads are not recorded. */
export type OperatorActionKind = 'redrive' | 'force_fail' | 'replay_delivery';

/** What an operator write came to: `ok`, or why nothing was changed. */
export type OperatorOutcome = 'ok' | 'not_found' | 'terminal' | 'leased' | 'not_dead';

/** One row of the action log. */
export interface OperatorActionRow {
  id: string;
  actor: string;
  via: string;
  action: string;
  target: string;
  reason: string | null;
  outcome: string;
  detail: string | null;
  created_at: Date;
}

/** A non-terminal task, with its age and how long it has been untouched. */
export interface StuckTaskRow {
  id: string;
  status: string;
  server: string;
  toolset: string;
  contract: string;
  idle_seconds: number;
  age_seconds: number;
  next_attempt_at: Date;
  consecutive_errors: number;
  claim_count: number;
  lease_owner: string | null;
  leased: boolean;
  last_error: string | null;
}

/** A dead-lettered webhook delivery. */
export interface DeadDeliveryRow {
  id: string;
  subscription_id: string;
  attempts: number;
  created_at: Date;
  finished_at: Date | null;
  event_type: string;
  task_id: string;
  last_status_code: number | null;
  last_error: string | null;
}

/** Filters of {@link OperatorRepository.listStuck}. */
export interface StuckQuery {
  readonly status?: string;
  readonly server?: string;
  /** Created at least this long ago. */
  readonly olderThanSeconds: number;
  readonly limit: number;
}

/** The result of an operator write, as recorded. */
export interface OperatorResult {
  readonly outcome: OperatorOutcome;
  /** Operator-facing explanation (e.g. until when the lease holds). */
  readonly detail: string | null;
  /** The action log row's ID. */
  readonly actionId: string;
}

/**
 * Operator commands over the database, shared by `npm run admin` and the admin routes. Every
 * write is recorded in `operator_actions` in the same transaction as its effect (or with the
 * reason it was refused), so the log never claims a change that did not happen.
 */
export class OperatorRepository {
  constructor(private readonly db: Database) {}

  async listStuck(query: StuckQuery): Promise<StuckTaskRow[]> {
    const rows = await this.db.query<StuckTaskRow>(LIST_STUCK_TASKS_SQL, [
      query.status ?? null,
      query.server ?? null,
      query.olderThanSeconds,
      query.limit,
    ]);
    return rows.map((r) => ({
      ...r,
      idle_seconds: Math.round(Number(r.idle_seconds)),
      age_seconds: Math.round(Number(r.age_seconds)),
    }));
  }

  /** Makes a task due now (refused while a poller holds a live lease on it). */
  redrive(actor: OperatorActor, taskId: string, reason: string | null): Promise<OperatorResult> {
    return this.taskWrite(actor, 'redrive', taskId, reason, REDRIVE_TASK_SQL, [taskId], true);
  }

  /** Ends a task `failed_by_operator` (refused while a poller holds a live lease on it). */
  forceFail(actor: OperatorActor, taskId: string, reason: string): Promise<OperatorResult> {
    return this.taskWrite(actor, 'force_fail', taskId, reason, FORCE_FAIL_TASK_SQL, [
      taskId,
      `Failed by an operator: ${reason}`,
    ]);
  }

  async listDeadDeliveries(limit: number): Promise<DeadDeliveryRow[]> {
    return this.db.query<DeadDeliveryRow>(LIST_DEAD_DELIVERIES_SQL, [limit]);
  }

  /** Puts a dead-lettered delivery back in the queue, due now. */
  async replayDelivery(
    actor: OperatorActor,
    deliveryId: string,
    reason: string | null,
  ): Promise<OperatorResult> {
    return this.db.transaction(async (tx) => {
      const done = await tx.query(REPLAY_DELIVERY_SQL, [deliveryId]);
      let outcome: OperatorOutcome = 'ok';
      let detail: string | null = null;
      if (done.length === 0) {
        const rows = await tx.query<{ status: string }>(DELIVERY_STATUS_SQL, [deliveryId]);
        outcome = rows.length === 0 ? 'not_found' : 'not_dead';
        detail = rows.length === 0 ? null : `delivery is ${rows[0].status}`;
      } else {
        await tx.query(`SELECT pg_notify($1, 'replay')`, [TASKS_DUE_CHANNEL]);
      }
      const id = await record(tx, actor, 'replay_delivery', deliveryId, reason, outcome, detail);
      return { outcome, detail, actionId: id };
    });
  }

  async listActions(limit: number): Promise<OperatorActionRow[]> {
    return this.db.query<OperatorActionRow>(LIST_ACTIONS_SQL, [limit]);
  }

  private async taskWrite(
    actor: OperatorActor,
    action: OperatorActionKind,
    taskId: string,
    reason: string | null,
    sql: string,
    params: unknown[],
    wake = false,
  ): Promise<OperatorResult> {
    return this.db.transaction(async (tx) => {
      const done = await tx.query(sql, params);
      let outcome: OperatorOutcome = 'ok';
      let detail: string | null = null;
      if (done.length === 0) {
        const rows = await tx.query<{ status: string; leased: boolean; lease_expires_at: Date }>(
          TASK_WRITE_REFUSAL_SQL,
          [taskId],
        );
        const row = rows[0];
        if (!row) outcome = 'not_found';
        else if (row.leased) {
          outcome = 'leased';
          detail = `a poller holds the task until ${row.lease_expires_at.toISOString()}; retry after`;
        } else {
          outcome = 'terminal';
          detail = `task is ${row.status}`;
        }
      } else if (wake) {
        await tx.query(`SELECT pg_notify($1, 'redrive')`, [TASKS_DUE_CHANNEL]);
      }
      const id = await record(tx, actor, action, taskId, reason, outcome, detail);
      return { outcome, detail, actionId: id };
    });
  }
}

async function record(
  tx: Queryable,
  actor: OperatorActor,
  action: OperatorActionKind,
  target: string,
  reason: string | null,
  outcome: OperatorOutcome,
  detail: string | null,
): Promise<string> {
  const rows = await tx.query<{ id: string }>(RECORD_ACTION_SQL, [
    actor.name,
    actor.via,
    action,
    target,
    reason,
    outcome,
    detail,
  ]);
  return rows[0].id;
}
