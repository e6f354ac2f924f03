import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Settings, SETTINGS } from '@app/config';
import { GatewayMetrics } from '@app/metrics';
import { LeasedWorkEngine } from '@app/leasing';
import {
  ClaimedDelivery,
  ListenConnection,
  TaskRepository,
  WEBHOOKS_DUE_CHANNEL,
  WebhookRepository,
} from '@app/persistence';
import { DEFAULT_RETRY_POLICY, EventAnswerLinks, WebhookDeliveryWorker } from '@app/webhooks';
import { WEBHOOK_WORKER_ID } from './webhooks.tokens';
/** A receiver gets 10 s (events.md, "Delivery"). */
export const WEBHOOK_TIMEOUT_MS = 10_000;
// Sixteen parallel POSTs per poller: enough to ride out a few receivers timing out at 10 s each
// without starving the rest, small next to the pool (deliveries hold no connection while sending).
const WEBHOOK_SLOTS = 16;
// Retries come due without a notification; one cheap empty claim per second per poller.
const FALLBACK_INTERVAL_MS = 1000;

/**
 * The webhook deliveries' share of the poller: the delivery worker (on the same leased-work
 * engine as task attempts) and its LISTEN wake-up. The poller's lifecycle starts it once the
 * database answers and stops its claiming together with task claiming; its drain shares the one
 * DRAIN_TIMEOUT_MS deadline (an unfinished delivery keeps its lease and is sent again after it
 * ends: at-least-once).
 */
@Injectable()
export class WebhookDeliveryService {
  private readonly worker: WebhookDeliveryWorker;
  private unsubscribe?: () => Promise<void>;

  constructor(
    @Inject(SETTINGS) settings: Settings,
    @Inject(WEBHOOK_WORKER_ID) workerId: string,
    repo: WebhookRepository,
    tasks: TaskRepository,
    metrics: GatewayMetrics,
    private readonly connection: ListenConnection,
    private readonly log: PinoLogger,
  ) {
    this.worker = new WebhookDeliveryWorker(
      repo,
      {
        workerId,
        slots: WEBHOOK_SLOTS,
        // The lease must outlast the request, or a slow 2xx would be recorded by nobody.
        leaseMs: Math.max(settings.lease.ms, WEBHOOK_TIMEOUT_MS + 20_000),
        deadWorkerAfterMs: settings.worker.deadAfterMs,
        timeoutMs: WEBHOOK_TIMEOUT_MS,
        retry: DEFAULT_RETRY_POLICY,
        allowPrivateNetworks: settings.webhooks.allowPrivateNetworks,
        fallbackIntervalMs: FALLBACK_INTERVAL_MS,
        trackingDegradedAfter: settings.scheduling.trackingDegradedAfter,
        answerLinks: EventAnswerLinks.fromSettings(settings.console, tasks),
      },
      log,
      metrics,
    );
  }

  /** The delivery engine, for the lifecycle's shutdown. */
  get engine(): LeasedWorkEngine<ClaimedDelivery> {
    return this.worker.engine;
  }

  /** Listens and claims; the lifecycle calls it once the database answers. */
  start(): void {
    this.unsubscribe = this.connection.subscribe(WEBHOOKS_DUE_CHANNEL, {
      onNotify: () => this.worker.poke(),
      onLost: (error, retryInMs) =>
        this.log.warn({ err: error, retryInMs }, 'webhook listener lost'),
    });
    this.worker.start();
  }

  /** Stops listening (after claiming stopped and deliveries drained). */
  async close(): Promise<void> {
    await this.unsubscribe?.();
  }
}
