import { PollerProcess, startPoller } from '../../test/helpers/processes';

/** The poller settings of a chaos run: a 5 s lease so kills and pauses resolve within seconds. */
export const CHAOS_POLLER_ENV: Readonly<Record<string, string>> = {
  LEASE_MS: '5000',
  POLL_INTERVAL_MS: '500',
  MIN_POLL_INTERVAL_MS: '200',
  INPUT_REQUIRED_POLL_INTERVAL_MS: '700',
  BACKOFF_BASE_MS: '300',
  MAX_BACKOFF_MS: '3000',
  HEARTBEAT_INTERVAL_MS: '500',
  CLAIM_FALLBACK_INTERVAL_MS: '1000',
  DRAIN_TIMEOUT_MS: '3000',
  WORKER_SLOTS: '32',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  LOG_LEVEL: 'info',
};

/**
 * One of the fleet's poller positions. Each start is a new incarnation with a new worker ID
 * (`chaos-p2.r3`), as a replaced pod would have, so the checker can tell which process held a
 * claim when a fault hit it.
 */
export class PollerSlot {
  current?: PollerProcess;
  paused = false;
  incarnations = 0;
  /** Every incarnation's JSON log lines, kept for the run's log directory. */
  readonly retired: PollerProcess[] = [];

  constructor(
    readonly index: number,
    private readonly databaseUrl: () => string,
    private readonly serversFile: string,
  ) {}

  get workerId(): string | undefined {
    return this.current?.workerId;
  }

  async start(): Promise<void> {
    this.incarnations++;
    this.current = await startPoller({
      databaseUrl: this.databaseUrl(),
      serversFile: this.serversFile,
      workerId: `chaos-p${this.index}.r${this.incarnations}`,
      env: CHAOS_POLLER_ENV,
    });
    this.paused = false;
  }

  async kill(): Promise<void> {
    const poller = this.current;
    if (!poller) return;
    this.current = undefined;
    this.retired.push(poller);
    await poller.kill();
  }

  pause(): void {
    this.current?.pause();
    this.paused = true;
  }

  resume(): void {
    this.current?.resume();
    this.paused = false;
  }

  /** A process that died on its own (not by the schedule) is a finding, not a fault. */
  exitedUnexpectedly(): boolean {
    const child = this.current?.child;
    return child !== undefined && (child.exitCode !== null || child.signalCode !== null);
  }

  async stop(): Promise<void> {
    const poller = this.current;
    if (!poller) return;
    this.resume();
    this.retired.push(poller);
    this.current = undefined;
    await poller.terminate(15_000).catch(() => poller.kill());
  }
}
