import { ChaosCluster } from './chaos-cluster';
import { ChaosOptions } from './chaos-options';
import { chaosToolsets } from './chaos-toolsets';
import { FaultInjector } from './fault-injector';
import { planFaults } from './fault-schedule';
import { GatewayClient } from './gateway-client';
import { SeededRandom } from './seeded-random';
import { TaskDriver } from './task-driver';
import { planTasks } from './task-plan';
import { TerminalWatch } from './terminal-watch';
import { waitUntil } from '../../test/helpers/wait';

/** The live part of a run, handed to the evidence gathering and the report. */
export interface ChaosRunState {
  driver: TaskDriver;
  injector: FaultInjector;
  watch: TerminalWatch;
  client: GatewayClient;
  startedAt: number;
  /** When the last task became terminal (or the drain deadline passed). */
  drainedAt: number;
  /** Pollers that exited without being killed by the schedule (restarted, and reported). */
  unexpectedExits: string[];
  problems: string[];
}

/**
 * Submits the plan while the faults fire, then drains: waits (deadline-based) until every
 * accepted task is terminal and every webhook delivery has been made.
 */
export async function runChaos(
  cluster: ChaosCluster,
  options: ChaosOptions,
): Promise<ChaosRunState> {
  const random = new SeededRandom(options.seed);
  const plan = planTasks(options, random);
  const client = new GatewayClient(() => cluster.apiUrls(), cluster.apiKey);
  await waitUntil(
    () => catalogReady(client, options),
    'every chaos toolset in the catalog',
    60_000,
    250,
  );
  const driver = new TaskDriver(plan, client, options.seed);
  const injector = new FaultInjector(
    {
      db: cluster.db,
      pollers: cluster.pollers,
      restartable: cluster.upstreamA,
      hangable: cluster.upstreamB,
    },
    options,
    random,
  );
  const watch = new TerminalWatch(cluster.db);
  const state: ChaosRunState = {
    driver,
    injector,
    watch,
    client,
    startedAt: Date.now(),
    drainedAt: 0,
    unexpectedExits: [],
    problems: [],
  };
  watch.start();
  injector.schedule(planFaults(options, random), state.startedAt);
  const monitor = setInterval(() => void reviveCrashed(cluster, state), 1000);
  try {
    await driver.run(state.startedAt);
    await injector.done();
    const ids = driver.tasks.flatMap((t) => (t.taskId ? [t.taskId] : []));
    await waitUntil(
      async () => (await activeCount(cluster, ids)) === 0 || undefined,
      'every task terminal',
      options.drainSeconds * 1000,
      250,
    ).catch((error: unknown) => state.problems.push(String(error)));
    state.drainedAt = Date.now();
    // A delivery whose poller died mid-send is re-sent after its lease (30 s); one whose first
    // attempt failed comes back after the retry policy's first step (15 s ± 20 %).
    await waitUntil(
      async () => (await pendingDeliveries(cluster)) === 0 || undefined,
      'every webhook delivery made',
      75_000,
      250,
    ).catch((error: unknown) => state.problems.push(String(error)));
  } finally {
    clearInterval(monitor);
    await watch.stop();
  }
  return state;
}

async function catalogReady(
  client: GatewayClient,
  options: ChaosOptions,
): Promise<true | undefined> {
  const answer = await client.send('GET', '/v1/toolsets');
  const items = (answer.body?.items ?? []) as { name: string; available: boolean }[];
  const ready = chaosToolsets(options.fault).every((t) =>
    items.some((i) => i.name === t.name && i.available),
  );
  return ready || undefined;
}

async function activeCount(cluster: ChaosCluster, ids: string[]): Promise<number> {
  const rows = await cluster.db.queryPatiently<{ n: number }>(
    `SELECT count(*)::int AS n FROM tasks
      WHERE id = ANY($1::text[]) AND status NOT IN ('completed', 'failed', 'cancelled')`,
    [ids],
  );
  return rows[0].n;
}

async function pendingDeliveries(cluster: ChaosCluster): Promise<number> {
  const rows = await cluster.db.queryPatiently<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`,
  );
  return rows[0].n;
}

/**
 * A poller or API replica that died on its own is a finding; it is restarted so the run can
 * still drain and the rest of the invariants still get checked.
 */
async function reviveCrashed(cluster: ChaosCluster, state: ChaosRunState): Promise<void> {
  for (const [i, api] of cluster.apis.entries()) {
    if (!api.exited()) continue;
    state.unexpectedExits.push(`API replica ${i + 1} exited on its own: ${api.exitReport()}`);
    await api
      .start()
      .catch((error: unknown) => state.problems.push(`API restart: ${String(error)}`));
  }
  for (const slot of cluster.pollers) {
    if (!slot.exitedUnexpectedly()) continue;
    const code = slot.current?.child.exitCode;
    state.unexpectedExits.push(`${slot.workerId} exited on its own (code ${String(code)})`);
    await slot.kill();
    await slot.start().catch((error: unknown) => state.problems.push(`restart: ${String(error)}`));
  }
}
