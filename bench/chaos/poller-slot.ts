import { PollerProcess, startPoller } from '../../test/helpers/processes';
import { waitUntil } from '../../test/helpers/wait';

/**
 * The poller settings of a chaos run: a 10 s lease, so kills and pauses resolve within seconds
 * while a loaded 2-core box (five Node processes, Postgres, the upstreams) still answers calls
 * inside their 6 s deadline.
 */
export const CHAOS_POLLER_ENV: Readonly<Record<string, string>> = {
  LEASE_MS: '10000',
  POLL_INTERVAL_MS: '500',
  MIN_POLL_INTERVAL_MS: '200',
  INPUT_REQUIRED_POLL_INTERVAL_MS: '700',
  BACKOFF_BASE_MS: '300',
  MAX_BACKOFF_MS: '3000',
  // 2 s (dead after 6 s): longer than a Postgres restart, else every live worker looks dead
  // after one and its pinned stdio native tasks are ended upstream_task_lost (docs/chaos.md).
  HEARTBEAT_INTERVAL_MS: '2000',
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
  /** Started and answering readiness: only a ready poller is a fault target. */
  ready = false;
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
    const poller = await startPoller({
      databaseUrl: this.databaseUrl(),
      serversFile: this.serversFile,
      workerId: `chaos-p${this.index}.r${this.incarnations}`,
      env: CHAOS_POLLER_ENV,
      waitReady: false,
    });
    // Held before it is ready, so a slow start can still be stopped; the helper's 20 s
    // readiness wait is too short for a restart on a box this loaded.
    this.current = poller;
    this.paused = false;
    this.ready = false;
    await waitUntil(
      async () => {
        if (poller.child.exitCode !== null || poller.child.signalCode !== null) {
          const code = String(poller.child.exitCode ?? poller.child.signalCode);
          const tail = [
            ...poller.logs.slice(-5).map((line) => JSON.stringify(line)),
            poller.stderr().slice(-1500),
          ];
          throw new Error(
            `${poller.workerId} exited at start (${code}); last output: ${tail.join(' | ')}`,
          );
        }
        const res = await fetch(`http://127.0.0.1:${poller.metricsPort}/healthz/ready`);
        return res.status === 200 || undefined;
      },
      `${poller.workerId} ready`,
      60_000,
      200,
    );
    this.ready = true;
  }

  async kill(): Promise<void> {
    const poller = this.current;
    if (!poller) return;
    this.current = undefined;
    this.ready = false;
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
