import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Settings } from '@app/config';
import { GatewayMetrics } from '@app/metrics';
import { WebhookRepository } from '@app/persistence';
import { DEFAULT_RETRY_POLICY, WebhookDeliveryWorker } from '@app/webhooks';
import { ChannelListener } from '@app/persistence';
import { WEBHOOK_SETTINGS, WEBHOOK_WORKER_ID } from './webhooks.tokens';

/** The channel the outbox trigger notifies when it creates deliveries. */
export const WEBHOOKS_DUE_CHANNEL = 'mcp_webhooks_due';
/** A receiver gets 10 s (events.md, "Delivery"). */
export const WEBHOOK_TIMEOUT_MS = 10_000;
// Sixteen parallel POSTs per poller: enough to ride out a few receivers timing out at 10 s each
// without starving the rest, small next to the pool (deliveries hold no connection while sending).
const WEBHOOK_SLOTS = 16;
// Retries come due without a notification; one cheap empty claim per second per poller.
const FALLBACK_INTERVAL_MS = 1000;

/**
 * Runs the webhook delivery worker in the poller: LISTEN for new deliveries, claim and send,
 * and on shutdown stop claiming and drain within DRAIN_TIMEOUT_MS (an unfinished delivery keeps
 * its lease and is sent again after it ends: at-least-once).
 */
@Injectable()
export class WebhookDeliveryService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly worker: WebhookDeliveryWorker;
  private readonly listener: ChannelListener;
  private stopping?: Promise<void>;

  constructor(
    @Inject(WEBHOOK_SETTINGS) private readonly settings: Settings,
    @Inject(WEBHOOK_WORKER_ID) workerId: string,
    repo: WebhookRepository,
    metrics: GatewayMetrics,
    private readonly log: PinoLogger,
  ) {
    this.worker = new WebhookDeliveryWorker(
      repo,
      {
        workerId,
        slots: WEBHOOK_SLOTS,
        // The lease must outlast the request, or a slow 2xx would be recorded by nobody.
        leaseMs: Math.max(settings.lease.ms, WEBHOOK_TIMEOUT_MS + 20_000),
        timeoutMs: WEBHOOK_TIMEOUT_MS,
        retry: DEFAULT_RETRY_POLICY,
        allowPrivateNetworks: settings.webhooks.allowPrivateNetworks,
        fallbackIntervalMs: FALLBACK_INTERVAL_MS,
        trackingDegradedAfter: settings.scheduling.trackingDegradedAfter,
      },
      log,
      metrics,
    );
    this.listener = new ChannelListener({
      url: settings.database.url ?? '',
      channel: WEBHOOKS_DUE_CHANNEL,
      appName: 'mcp-task-gateway-poller-webhooks',
      onNotify: () => this.worker.poke(),
      onLost: (error, retryInMs) =>
        this.log.warn({ err: error, retryInMs }, 'webhook listener lost'),
    });
  }

  onApplicationBootstrap(): void {
    this.listener.start();
    // The claim itself retries with backoff until the database answers.
    this.worker.start();
  }

  /**
   * Stops claiming deliveries and drains them within `drainMs`. The poller's lifecycle calls it
   * at the start of its shutdown, in parallel with the task drain; later calls share the first.
   */
  stop(drainMs: number): Promise<void> {
    this.stopping ??= (async () => {
      await this.listener.stop();
      await this.worker.stop(drainMs);
    })();
    return this.stopping;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop(this.settings.worker.drainTimeoutMs);
  }
}
