import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { hostname } from 'node:os';
import { McpServersConfig, Settings, SETTINGS } from '@app/config';
import { WorkerRepository } from '@app/persistence';
import { RescueHold } from '../claiming/rescue-hold';
import { MCP_SERVERS, WORKER_ID } from '../poller.tokens';

/** Read once at boot: the version every worker row carries, for mixed-version rollouts. */
const VERSION = process.env.npm_package_version ?? '0.1.0';

/**
 * The `workers` row of this poller: registered before the first claim, heartbeated every
 * HEARTBEAT_INTERVAL_MS; a worker silent for the dead-after window is dead (leases.md, "Workers"), and
 * its pinned rows go to anyone. A failed heartbeat is logged and retried on the next tick: a short
 * database outage must not stop the worker.
 */
@Injectable()
export class WorkerRegistryService {
  private timer?: NodeJS.Timeout;
  private beating?: Promise<void>;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(WORKER_ID) readonly workerId: string,
    @Inject(MCP_SERVERS) private readonly servers: McpServersConfig,
    private readonly workers: WorkerRepository,
    private readonly log: PinoLogger,
    private readonly rescueHold: RescueHold,
  ) {}

  /** The dead-after window the claim uses to judge a pinned row's worker dead (settings). */
  get deadAfterMs(): number {
    return this.settings.worker.deadAfterMs;
  }

  async register(): Promise<void> {
    await this.registerRow();
    this.timer = setInterval(() => this.beat(), this.settings.worker.heartbeatIntervalMs);
    this.timer.unref();
  }

  /** Stops heartbeating and marks the row stopped: its pinned rows are handed over at once. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    await this.workers.markStopped(this.workerId).catch((error: unknown) => {
      this.log.warn({ err: error }, 'could not mark the worker stopped');
    });
  }

  private async registerRow(): Promise<void> {
    await this.workers.register({
      id: this.workerId,
      host: hostname(),
      pid: process.pid,
      version: VERSION,
      toolsets: [...this.servers.toolsets.keys()],
    });
  }

  private beat(): void {
    if (this.beating) return;
    const sentMs = Date.now();
    this.beating = this.workers
      .heartbeat(this.workerId, this.settings.worker.deadAfterMs)
      .then(async (alive) => {
        this.rescueHold.sawDatabase(sentMs);
        // Our row vanished (pruned during a long outage): register again rather than run unseen.
        if (!alive && this.timer) await this.registerRow();
      })
      .catch((error: unknown) => {
        // A worker whose slots are all busy claims nothing in an outage: its heartbeat is what
        // tells its next claim to hold back the leases that ran out meanwhile.
        this.rescueHold.failed(error);
        this.log.warn({ err: error }, 'heartbeat failed');
      })
      .finally(() => (this.beating = undefined));
  }
}
