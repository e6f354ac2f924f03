import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Settings, SETTINGS } from '@app/config';
import { UpstreamPool } from '@app/upstream';
import { WakeSignal } from '@app/leasing';
import {
  ClaimedTask,
  FleetRepository,
  isDatabaseUnavailable,
  TaskLeaseRepository,
} from '@app/persistence';
import { ClaimLoopService } from './claiming/claim-loop.service';
import { NotifyListenerService } from './claiming/notify-listener.service';
import { PushWatchService } from './push/push-watch.service';
import { ItemAbort } from './running/item-abort';
import { TaskRunnerService } from './running/task-runner.service';
import { CatalogPublisherService } from './upkeep/catalog-publisher.service';
import { PERIODIC_JOBS, PeriodicJob } from './upkeep/periodic-job';
import { WorkerRegistryService } from './upkeep/worker-registry.service';
import { WebhookDeliveryService } from './webhooks/webhook-delivery.service';

// After DRAIN_TIMEOUT_MS the repeatable rest is aborted; an aborted call settles (and releases
// its own claim) within this grace, or its claim is released from here.
const ABORT_GRACE_MS = 2000;
const DB_WAIT_MAX_MS = 5000;

/**
 * The one lifecycle of a poller (leases.md, "Graceful shutdown"); it owns every loop and job.
 * Start: connect upstream, register (retried while the database is unavailable), listen, then
 * start both engines (task attempts, webhook deliveries) and the periodic jobs in their list's
 * order ({@link PERIODIC_JOBS}); readiness turns true only then. Stop (SIGTERM): stop all
 * claiming at once → drain tasks and deliveries in parallel under one DRAIN_TIMEOUT_MS deadline
 * → abort the repeatable rest (polls, cancels) and release their claims due now without an error
 * count → keep submits and held calls until they end → wake the other pollers → stop the
 * periodic jobs and both listeners together → mark the worker stopped → close upstream
 * connections; the database pool closes last.
 */
@Injectable()
export class PollerLifecycleService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private starting?: Promise<void>;
  private stopping = false;
  /** Cuts the wait for the database short at shutdown. */
  private readonly stopSignal = new WakeSignal();
  /**
   * Items a draining worker may abort and give back, since a repeat costs nothing (invariant 8):
   * decided by what the attempt is doing, not by its claim's phase (a sync call held again, or
   * a multi-round-trip call retried, runs from a poll-phase claim).
   */
  private readonly repeatable = (item: ClaimedTask): boolean =>
    !this.runner.holdsUpstreamCall(item);

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly pool: UpstreamPool,
    private readonly catalog: CatalogPublisherService,
    private readonly worker: WorkerRegistryService,
    private readonly notify: NotifyListenerService,
    private readonly tasks: ClaimLoopService,
    private readonly runner: TaskRunnerService,
    private readonly leases: TaskLeaseRepository,
    private readonly fleet: FleetRepository,
    private readonly webhooks: WebhookDeliveryService,
    @Inject(PERIODIC_JOBS) private readonly jobs: readonly PeriodicJob[],
    private readonly log: PinoLogger,
    private readonly push: PushWatchService,
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
    this.stopSignal.poke();
    await this.starting;
    const drainMs = this.settings.worker.drainTimeoutMs;
    // All claiming stops at once (tasks and webhook deliveries), then both drain in parallel
    // under the one deadline (docs/leases.md, "Graceful shutdown").
    await Promise.all([this.tasks.engine.stopClaiming(), this.webhooks.engine.stopClaiming()]);
    const deadline = Date.now() + drainMs;
    this.log.info(
      {
        inflight: this.tasks.engine.inFlight().length,
        deliveries: this.webhooks.engine.inFlight().length,
        drainTimeoutMs: drainMs,
      },
      'draining',
    );
    // Deliveries still sending at the deadline keep their leases; other pollers send them
    // again once this worker's row is marked stopped below (at-least-once; the receiver dedups
    // on webhook-id).
    await Promise.all([this.drainTasks(deadline), this.webhooks.engine.drain(deadline)]);
    // Nothing queued for group commit is left behind (invariant 8).
    await this.leases.flushWrites();
    await this.fleet.notifyDue('release').catch(() => undefined);
    await Promise.all([
      ...this.jobs.map((job) => job.stop()),
      this.notify.stop(),
      this.webhooks.close(),
    ]);
    await this.worker.stop();
    await this.catalog.close();
    await this.push.close();
    await this.pool.close();
    this.log.info('worker stopped');
  }

  private async startWorker(): Promise<void> {
    if (!(await this.registerWhenDatabaseAnswers())) return;
    this.notify.start((payload) => {
      if (payload === 'cancel') this.runner.checkHeldCalls();
      this.tasks.engine.poke();
    });
    this.tasks.start(this.worker.deadAfterMs);
    this.webhooks.start();
    for (const job of this.jobs) job.start();
    this.log.info({ workerId: this.worker.workerId }, 'worker claiming');
  }

  /**
   * Task attempts up to `deadline`; then polls and cancels (safe to repeat) are aborted and
   * given back. Submits are not (a released submit that may have been sent ends
   * outcome_uncertain on the next claim), and a held sync call is the submit: those keep
   * running, their leases renewed, until they end or the pod is killed ("Held calls at
   * shutdown").
   */
  private async drainTasks(deadline: number): Promise<void> {
    const engine = this.tasks.engine;
    if (await engine.drain(deadline)) return;
    engine.abort(this.repeatable, new ItemAbort('shutdown'));
    if (!(await engine.drain(Date.now() + ABORT_GRACE_MS, this.repeatable))) {
      await this.releaseStragglers();
    }
    const held = engine.inFlight().length;
    if (held > 0) {
      this.log.warn({ held }, 'keeping submits and held calls in flight until they end');
      await engine.drain(Infinity);
    }
  }

  /**
   * Claims start only once the worker's row is written: its first write is the test that the
   * database answers, retried while it is unavailable (lost between the start's wait and here, or
   * by a restart since), until it succeeds or a stop is asked (false). Any other failure is
   * thrown: the worker cannot start.
   */
  private async registerWhenDatabaseAnswers(): Promise<boolean> {
    for (let delay = 100; !this.stopping; delay = Math.min(delay * 2, DB_WAIT_MAX_MS)) {
      try {
        await this.worker.register();
        return true;
      } catch (error) {
        if (!isDatabaseUnavailable(error)) throw error;
        this.log.warn({ err: error, retryInMs: delay }, 'database not answering yet');
        await this.stopSignal.wait(delay);
      }
    }
    return false;
  }

  /** Calls that ignored the abort: give their claims back here; their late writes are fenced off. */
  private async releaseStragglers(): Promise<void> {
    for (const item of this.tasks.engine.inFlight(this.repeatable)) {
      await this.leases.release(item.lease).catch((error: unknown) => {
        this.log.warn({ err: error, task_id: item.id }, 'could not release a claim at shutdown');
      });
    }
  }
}
