import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Settings } from '@app/config';
import { UpstreamPool } from '@app/mcp';
import { Phase } from '@app/common';
import { ClaimedTask, Database, FleetRepository, TaskLeaseRepository } from '@app/persistence';
import { BacklogSamplingService } from './backlog-sampling.service';
import { CatalogPublisherService } from './catalog-publisher.service';
import { CatalogSweepJob } from './catalog-sweep.job';
import { DeadlineSweepJob } from './deadline-sweep.job';
import { ClaimLoopService } from './claim-loop.service';
import { NotifyListenerService } from './notify-listener.service';
import { POLLER_SETTINGS } from './poller.tokens';
import { RetentionJob } from './retention.job';
import { TaskRunnerService } from './task-runner.service';
import { WebhookDeliveryService } from './webhooks/webhook-delivery.service';
import { WorkerRegistryService } from './worker-registry.service';

// After DRAIN_TIMEOUT_MS the repeatable rest is aborted; an aborted call settles (and releases
// its own claim) within this grace, or its claim is released from here.
const ABORT_GRACE_MS = 2000;

/** Items a draining worker may abort and give back: a repeat costs nothing (invariant 8). */
function repeatable(item: ClaimedTask): boolean {
  return item.phase !== Phase.Submit;
}
const DB_WAIT_MAX_MS = 5000;

/**
 * Start and stop of the whole worker, in the order leases.md fixes. Start: connect upstream,
 * wait until the database answers, register, listen, then claim (readiness turns true only
 * then). Stop (SIGTERM): stop all claiming (tasks and webhooks) → drain both in parallel up to
 * DRAIN_TIMEOUT_MS → abort the repeatable rest (polls, cancels) and release their claims due
 * now without an error count → keep submits and held calls until they end → wake the other
 * pollers → mark the worker stopped → close upstream connections; the database pool closes last.
 */
@Injectable()
export class PollerLifecycleService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private starting?: Promise<void>;
  private stopping = false;

  constructor(
    @Inject(POLLER_SETTINGS) private readonly settings: Settings,
    private readonly db: Database,
    private readonly pool: UpstreamPool,
    private readonly catalog: CatalogPublisherService,
    private readonly worker: WorkerRegistryService,
    private readonly notify: NotifyListenerService,
    private readonly loop: ClaimLoopService,
    private readonly runner: TaskRunnerService,
    private readonly leases: TaskLeaseRepository,
    private readonly fleet: FleetRepository,
    private readonly sampler: BacklogSamplingService,
    private readonly retention: RetentionJob,
    private readonly sweep: CatalogSweepJob,
    private readonly deadlines: DeadlineSweepJob,
    private readonly webhooks: WebhookDeliveryService,
    private readonly log: PinoLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.catalog.subscribe();
    this.pool.start();
    // Not awaited: bootstrap must finish so the health port answers (not ready) meanwhile.
    this.starting = this.startWorker().catch((error: unknown) => {
      this.log.fatal({ err: error }, 'worker failed to start');
      process.exitCode = 1;
      process.kill(process.pid, 'SIGTERM');
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.starting;
    const drainMs = this.settings.worker.drainTimeoutMs;
    // All claiming stops at once (tasks and webhook deliveries); both drain in parallel under
    // the one DRAIN_TIMEOUT_MS budget (docs/leases.md, "Graceful shutdown").
    const webhooks = this.webhooks.stop(drainMs);
    await this.loop.stopClaiming();
    const inflight = this.loop.remaining().length;
    this.log.info({ inflight, drainTimeoutMs: drainMs }, 'draining');
    if (!(await this.loop.drain(drainMs))) {
      // Polls and cancels are safe to repeat: give them back. Submits are not (a released
      // submit that may have been sent ends outcome_uncertain on the next claim), and a held
      // sync call is the submit: those keep running, their leases renewed, until they end or
      // the pod is killed ("Held calls at shutdown").
      this.loop.abort(repeatable);
      if (!(await this.loop.drain(ABORT_GRACE_MS, repeatable))) await this.releaseStragglers();
      const held = this.loop.remaining().length;
      if (held > 0) {
        this.log.warn({ held }, 'keeping submits and held calls in flight until they end');
        await this.loop.drain(Infinity);
      }
    }
    await webhooks;
    await this.fleet.notifyDue('release').catch(() => undefined);
    await Promise.all([
      this.retention.stop(),
      this.sampler.stop(),
      this.notify.stop(),
      this.sweep.stop(),
      this.deadlines.stop(),
    ]);
    await this.worker.stop();
    await this.catalog.close();
    await this.pool.close();
    this.log.info('worker stopped');
  }

  private async startWorker(): Promise<void> {
    await this.waitForDatabase();
    if (this.stopping) return;
    await this.worker.register();
    this.notify.start((payload) => {
      if (payload === 'cancel') this.runner.checkHeldCalls();
      this.loop.poke();
    });
    this.loop.start(this.worker.deadAfterMs);
    this.sampler.start();
    this.retention.start();
    this.sweep.start(this.worker.deadAfterMs);
    this.deadlines.start();
    this.log.info({ workerId: this.worker.workerId }, 'worker claiming');
  }

  /** Claims start only once the database answers: a claim against a database still starting would only log errors. */
  private async waitForDatabase(): Promise<void> {
    for (let delay = 100; !this.stopping; delay = Math.min(delay * 2, DB_WAIT_MAX_MS)) {
      try {
        await this.db.query('SELECT 1');
        return;
      } catch (error) {
        this.log.warn({ err: error, retryInMs: delay }, 'database not answering yet');
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** Calls that ignored the abort: give their claims back here; their late writes are fenced off. */
  private async releaseStragglers(): Promise<void> {
    for (const item of this.loop.remaining(repeatable)) {
      await this.leases.release(item.lease).catch((error: unknown) => {
        this.log.warn({ err: error, task_id: item.id }, 'could not release a claim at shutdown');
      });
    }
  }
}
