import { Database } from './database';
import { TaskEventRow, toTaskEventRow } from './event.repository';
import { WEBHOOK_CLAIM_SQL, WEBHOOK_FINISH_ATTEMPT_SQL } from './sql/webhook-claim.sql';

/** A subscription as its owner may see it: never the secret. */
export interface WebhookSubscriptionRow {
  id: string;
  userId: string;
  url: string;
  description: string | null;
  createdAt: Date;
  disabledAt: Date | null;
  disabledReason: string | null;
}

export interface NewWebhookSubscription {
  id: string;
  userId: string;
  url: string;
  description: string | null;
  secret: string;
}

/** One recorded attempt, for GET /v1/webhooks/{id}/deliveries. */
export interface WebhookAttemptRow {
  eventId: string;
  /** The event's task and per-task sequence: what its public ID is made from. */
  eventTaskId: string;
  eventSequence: number;
  eventType: string;
  attempt: number;
  outcome: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  nextRetryAt: Date | null;
  deadLettered: boolean;
  attemptedAt: Date;
}

/** A claimed delivery with what sending it needs. Internal to the poller: holds the secret. */
export interface ClaimedDelivery {
  id: string;
  token: string;
  attempt: number;
  subscriptionId: string;
  url: string;
  secret: string;
  subscriptionDisabled: boolean;
  /** Since the event, by the database clock. */
  ageMs: number;
  /** The database clock at the claim, in seconds (the `webhook-timestamp`). */
  dbNowS: number;
  event: TaskEventRow;
  /** The task's stored trace context (libs/tracing); null when tracing was off at submit. */
  traceContext: Record<string, string> | null;
}

/** What one attempt ended as; `nextRetryMs` only with status `pending`. */
export interface AttemptRecord {
  status: 'pending' | 'delivered' | 'dead' | 'disabled' | 'skipped';
  nextRetryMs?: number;
  outcome: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** Set to disable the subscription (a 410), with this reason. */
  disableReason?: string;
}

const COLUMNS = `id, user_id, url, description, created_at, disabled_at, disabled_reason`;

/** The advisory-lock key space of the per-user subscription cap (the second key: the user's hash). */
const WEBHOOK_CAP_LOCK_SPACE = 0x6d637768;

/**
 * Webhook subscriptions (the API, scoped by user: another user's subscription is not found)
 * and their deliveries (the poller: the claim and fenced writes of leases.md).
 */
export class WebhookRepository {
  constructor(private readonly db: Database) {}

  async create(sub: NewWebhookSubscription): Promise<WebhookSubscriptionRow> {
    const rows = await this.db.query(
      `INSERT INTO webhook_subscriptions (id, user_id, url, description, secret)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
      [sub.id, sub.userId, sub.url, sub.description, sub.secret],
    );
    return toSubscription(rows[0]);
  }

  /**
   * Stores the subscription unless its user already has `max`; null then. The count and the
   * insert run under a transaction-scoped advisory lock per user, the insert's count in a
   * statement of its own after the lock (READ COMMITTED gives it a snapshot that sees every
   * subscription the previous holder committed). One statement could not do it: its snapshot
   * would be taken before the lock was granted, and two creates that started together would
   * both count the same rows (docs/events.md, "Webhooks").
   */
  async createWithinCap(
    sub: NewWebhookSubscription,
    max: number,
  ): Promise<WebhookSubscriptionRow | null> {
    return this.db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, [
        WEBHOOK_CAP_LOCK_SPACE,
        sub.userId,
      ]);
      const rows = await tx.query(
        `INSERT INTO webhook_subscriptions (id, user_id, url, description, secret)
         SELECT $1, $2, $3, $4, $5
          WHERE (SELECT count(*) FROM webhook_subscriptions WHERE user_id = $2) < $6
         RETURNING ${COLUMNS}`,
        [sub.id, sub.userId, sub.url, sub.description, sub.secret, max],
      );
      return rows.length > 0 ? toSubscription(rows[0]) : null;
    });
  }

  async countForUser(userId: string): Promise<number> {
    const rows = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_subscriptions WHERE user_id = $1`,
      [userId],
    );
    return rows[0].n;
  }

  async list(userId: string): Promise<WebhookSubscriptionRow[]> {
    const rows = await this.db.query(
      `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE user_id = $1 ORDER BY created_at, id`,
      [userId],
    );
    return rows.map(toSubscription);
  }

  async find(userId: string, id: string): Promise<WebhookSubscriptionRow | null> {
    const rows = await this.db.query(
      `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE user_id = $1 AND id = $2`,
      [userId, id],
    );
    return rows.length > 0 ? toSubscription(rows[0]) : null;
  }

  /** Deletes the subscription and its deliveries (a delivery in flight lands nowhere). */
  async delete(userId: string, id: string): Promise<boolean> {
    const rows = await this.db.query(
      `DELETE FROM webhook_subscriptions WHERE user_id = $1 AND id = $2 RETURNING id`,
      [userId, id],
    );
    return rows.length > 0;
  }

  /** The subscription's most recent attempts, newest first. */
  async recentAttempts(subscriptionId: string, limit: number): Promise<WebhookAttemptRow[]> {
    const rows = await this.db.query(
      `SELECT a.event_id::text AS event_id, e.task_id, e.sequence, e.type, a.attempt, a.outcome, a.status_code,
              a.duration_ms, a.error, a.next_retry_at, a.dead_lettered, a.created_at
         FROM webhook_attempts a JOIN task_events e ON e.id = a.event_id
        WHERE a.subscription_id = $1
        ORDER BY a.id DESC
        LIMIT $2`,
      [subscriptionId, limit],
    );
    return rows.map((r) => ({
      eventId: r.event_id as string,
      eventTaskId: r.task_id as string,
      eventSequence: r.sequence as number,
      eventType: r.type as string,
      attempt: r.attempt as number,
      outcome: r.outcome as string,
      statusCode: r.status_code as number | null,
      durationMs: r.duration_ms as number,
      error: r.error as string | null,
      nextRetryAt: r.next_retry_at as Date | null,
      deadLettered: r.dead_lettered as boolean,
      attemptedAt: r.created_at as Date,
    }));
  }

  /**
   * Claims up to `limit` deliveries for `workerId` (one statement; see the SQL): first those
   * leased by workers dead by the rule of worker-liveness.sql.ts with the dead-after window
   * `deadWorkerAfterMs`, then due ones.
   */
  async claim(
    workerId: string,
    limit: number,
    leaseMs: number,
    deadWorkerAfterMs: number,
  ): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    const rows = await this.db.query(
      WEBHOOK_CLAIM_SQL,
      [workerId, limit, leaseMs, deadWorkerAfterMs],
      'mcp_tasks_webhook_claim',
    );
    return rows.map((r) => ({
      id: r.id as string,
      token: r.lease_token as string,
      attempt: r.attempts as number,
      subscriptionId: r.subscription_id as string,
      url: r.url as string,
      secret: r.secret as string,
      subscriptionDisabled: r.subscription_disabled as boolean,
      ageMs: Number(r.age_ms),
      dbNowS: Number(r.db_now_s),
      event: toTaskEventRow({ ...r, id: r.event_id, tx: r.event_tx }),
      traceContext: (r.trace_context ?? null) as Record<string, string> | null,
    }));
  }

  /** Records an attempt, fenced; false means the lease was lost and nothing was written. */
  async finishAttempt(
    delivery: { id: string; token: string },
    record: AttemptRecord,
  ): Promise<boolean> {
    const rows = await this.db.query(WEBHOOK_FINISH_ATTEMPT_SQL, [
      delivery.id,
      delivery.token,
      record.status,
      record.nextRetryMs ?? 0,
      record.outcome,
      record.statusCode,
      record.durationMs,
      record.error === null ? null : record.error.slice(0, 500),
      record.disableReason ?? null,
    ]);
    return rows.length > 0;
  }
}

function toSubscription(r: Record<string, unknown>): WebhookSubscriptionRow {
  return {
    id: r.id as string,
    userId: r.user_id as string,
    url: r.url as string,
    description: r.description as string | null,
    createdAt: r.created_at as Date,
    disabledAt: r.disabled_at as Date | null,
    disabledReason: r.disabled_reason as string | null,
  };
}
