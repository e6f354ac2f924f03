import { ClaimBackoff, ClaimedBatch, LeasedWork, LeasedWorkEngine, SlotCount } from '@app/leasing';
import { AttemptRecord, ClaimedDelivery, WebhookRepository } from '@app/persistence';
import type { GatewayMetrics, WebhookOutcome } from '@app/metrics';
import { annotateTaskSpan, runInTaskSpan } from '@app/tracing';
import { EventProjectionContext, toEventView } from '@app/views';
import {
  HostResolver,
  WebhookDestinationError,
  checkDestination,
  parseWebhookUrl,
} from './destination.guard';
import { RetryPolicy, nextRetryMs } from './retry.policy';
import { postWebhook } from './webhook.sender';
import { signWebhook } from './webhook-signer';
import type { EventAnswerLinks } from './answer-link';

export interface DeliveryWorkerOptions extends EventProjectionContext {
  /** Lease owner written on claimed rows. */
  workerId: string;
  /** Deliveries in flight at once in this process. */
  slots: number;
  /** Must exceed timeout + DNS time, or a slow answer would land after the lease. */
  leaseMs: number;
  /**
   * The workers' dead-after window: a dead worker's deliveries are claimed before their leases
   * end (sql/webhook-claim.sql.ts).
   */
  deadWorkerAfterMs: number;
  /** Per-request deadline (events.md, "Delivery": 10 s). */
  timeoutMs: number;
  retry: RetryPolicy;
  allowPrivateNetworks: boolean;
  /** Claim again after this long even without a notification (retries come due silently). */
  fallbackIntervalMs: number;
  resolver?: HostResolver;
  /** Answer links for `task.input_required` events (docs/console.md); undefined: off. */
  answerLinks?: Pick<EventAnswerLinks, 'forEvent'>;
}

/** The few logger methods used (pino's shape). */
export interface DeliveryLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * The poller fleet's webhook sender on the leased-work engine (the same engine as task attempts,
 * with its own capacity: `slots` deliveries at once): claim due deliveries into free slots, send
 * each on its own (one failure never touches another or the loop), record each attempt with a
 * fenced write. At-least-once: a worker killed after sending but before recording leaves a row
 * that comes due again when its lease ends, and the receiver dedups on `webhook-id`.
 */
export class WebhookDeliveryWorker implements LeasedWork<ClaimedDelivery> {
  /** The engine, for an owner that stops and drains it together with others. */
  readonly engine: LeasedWorkEngine<ClaimedDelivery>;

  constructor(
    private readonly repo: WebhookRepository,
    private readonly options: DeliveryWorkerOptions,
    private readonly log: DeliveryLog,
    private readonly metrics?: GatewayMetrics,
  ) {
    this.engine = new LeasedWorkEngine({
      name: 'webhooks',
      work: this,
      capacity: new SlotCount(options.slots),
      fallbackIntervalMs: options.fallbackIntervalMs,
      log,
      // From 100 ms: a delivery claim is cheap and receivers wait on it.
      backoff: new ClaimBackoff(100, 5000),
    });
  }

  start(): void {
    this.engine.start();
  }

  /** Look for due deliveries now (a notification). */
  poke(): void {
    this.engine.poke();
  }

  /** Stops claiming and waits for in-flight deliveries up to `drainMs`; the rest re-run later. */
  async stop(drainMs: number): Promise<void> {
    await this.engine.stopClaiming();
    await this.engine.drain(Date.now() + drainMs);
  }

  async claim(limit: number): Promise<ClaimedBatch<ClaimedDelivery>> {
    const { workerId, leaseMs, deadWorkerAfterMs } = this.options;
    const items = await this.repo.claim(workerId, limit, leaseMs, deadWorkerAfterMs);
    if (items.length > 0) {
      this.metrics?.claims.inc({ phase: 'deliver' });
      this.metrics?.claimedRows.inc({ phase: 'deliver' }, items.length);
    }
    return { items };
  }

  /** Keyed by claim (the lease token), as task attempts are. */
  key(delivery: ClaimedDelivery): string {
    return delivery.token;
  }

  async run(delivery: ClaimedDelivery): Promise<undefined> {
    await this.deliver(delivery);
    return undefined;
  }

  /** One delivery, traced in the task's trace (a no-op when tracing is off); never throws. */
  private deliver(delivery: ClaimedDelivery): Promise<void> {
    const attributes = { 'webhook.event': delivery.event.type };
    return runInTaskSpan('webhook.deliver', delivery.traceContext, attributes, () =>
      this.deliverOnce(delivery),
    );
  }

  private async deliverOnce(delivery: ClaimedDelivery): Promise<void> {
    let record: AttemptRecord;
    let outcome: WebhookOutcome;
    try {
      [record, outcome] = await this.attempt(delivery);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      [record, outcome] = this.failure(delivery, null, 0, `internal error: ${message}`);
    }
    try {
      const applied = await this.repo.finishAttempt(delivery, record);
      if (!applied) outcome = 'lease_lost';
    } catch (error) {
      // The write failed (a database restart, say), the lease was not lost: the row stays leased
      // and comes due again when the lease ends, so the event is sent again (at-least-once).
      this.log.warn({ err: error, delivery_id: delivery.id }, 'could not record webhook attempt');
      outcome = 'unrecorded';
    }
    this.metrics?.webhookDeliveries.inc({ outcome });
    annotateTaskSpan({ 'webhook.outcome': outcome });
    if (record.statusCode !== null || record.error?.startsWith('timed out')) {
      this.metrics?.webhookDeliveryDuration.observe(record.durationMs / 1000);
    }
    if (record.status === 'dead' && outcome !== 'lease_lost' && outcome !== 'unrecorded')
      this.metrics?.webhookDeadLetters.inc();
    const level = outcome === 'ok' ? 'info' : 'warn';
    this.log[level](
      {
        delivery_id: delivery.id,
        event_id: delivery.event.id,
        subscription_id: delivery.subscriptionId,
        attempt: delivery.attempt,
        outcome,
        status_code: record.statusCode,
        duration_ms: record.durationMs,
        error: record.error,
      },
      'webhook attempt',
    );
  }

  private async attempt(delivery: ClaimedDelivery): Promise<[AttemptRecord, WebhookOutcome]> {
    if (delivery.subscriptionDisabled) {
      const skipped: AttemptRecord = {
        status: 'skipped',
        outcome: 'skipped',
        statusCode: null,
        durationMs: 0,
        error: 'subscription disabled',
      };
      return [skipped, 'permanent_error'];
    }
    const policy = {
      allowPrivateNetworks: this.options.allowPrivateNetworks,
      resolver: this.options.resolver,
    };
    let destination;
    try {
      // The scheme too, not only the address: an http hook made while private networks were
      // allowed must stop once they are not.
      destination = await checkDestination(parseWebhookUrl(delivery.url, policy), policy);
    } catch (error) {
      if (!(error instanceof WebhookDestinationError)) throw error;
      if (error.problem !== 'unresolvable') {
        // Refused, not retried: retrying an inward address for a day is what a rebind attack
        // waits for. The owner sees it in the deliveries list.
        const refused: AttemptRecord = {
          status: 'dead',
          outcome: 'refused',
          statusCode: null,
          durationMs: 0,
          error: `refused: ${error.message}`,
        };
        return [refused, 'permanent_error'];
      }
      return this.failure(delivery, null, 0, error.message);
    }
    const view = toEventView(delivery.event, this.options);
    const link = await this.options.answerLinks?.forEvent(delivery.event);
    if (link) view.data.answer_url = link;
    const body = JSON.stringify(view);
    const id = view.id;
    const timestamp = delivery.dbNowS;
    const answer = await postWebhook({
      destination,
      body,
      timeoutMs: this.options.timeoutMs,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'mcp-task-gateway-webhooks/1',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(delivery.secret, id, timestamp, body),
      },
    });
    const code = answer.statusCode;
    if (code !== null && code >= 200 && code < 300) {
      return [
        {
          status: 'delivered',
          outcome: 'ok',
          statusCode: code,
          durationMs: answer.durationMs,
          error: null,
        },
        'ok',
      ];
    }
    if (code === 410) {
      const gone: AttemptRecord = {
        status: 'disabled',
        outcome: 'disabled',
        statusCode: code,
        durationMs: answer.durationMs,
        error: 'receiver answered 410 Gone: subscription disabled',
        disableReason: 'the receiver answered 410 Gone',
      };
      return [gone, 'disabled'];
    }
    const why =
      code === null
        ? (answer.error ?? 'no answer')
        : code >= 300 && code < 400
          ? `redirect (${code}) not followed`
          : `receiver answered ${code}`;
    return this.failure(delivery, code, answer.durationMs, why);
  }

  /** A failed attempt: retry after the backoff, or dead-letter once the window is used up. */
  private failure(
    delivery: ClaimedDelivery,
    statusCode: number | null,
    durationMs: number,
    error: string,
  ): [AttemptRecord, WebhookOutcome] {
    const retryMs = nextRetryMs(this.options.retry, delivery.attempt, delivery.ageMs);
    if (retryMs === null) {
      return [
        { status: 'dead', outcome: 'dead_letter', statusCode, durationMs, error },
        'dead_letter',
      ];
    }
    return [
      { status: 'pending', nextRetryMs: retryMs, outcome: 'retry', statusCode, durationMs, error },
      'transient_error',
    ];
  }
}
