/**
 * Poller memory with 100k active tasks: 100,000 `working` rows due tomorrow (the poller must not
 * hold the backlog in memory) plus a trickle of real tasks polled every second. RSS is sampled
 * from /proc/<pid>/status (VmRSS) through the window.
 */
import { createBenchDatabase } from './lib/bench-db';
import { loadDayLongJobs, loadTasks } from './lib/load-tasks';
import { Fleet, startFleet, waitAllSubmitted } from './lib/poller-fleet';
import { pollerMissing } from './lib/poller-gate';
import { rssMb } from './lib/poller-harness';
import { round, sleep } from './lib/stats';
import { Benchmark } from './lib/types';

/** The poller's heap cap in k8s/base/poller-deployment.yaml; keep the two equal. */
const DEPLOYED_NODE_OPTIONS = '--max-old-space-size=128';

export const memoryBench: Benchmark = {
  name: 'memory',
  title: 'Poller memory with 100k active tasks',
  async run(ctx) {
    const settings = {
      activeTasks: 100_000,
      trickle: 200,
      pollIntervalMs: 1_000,
      windowMs: ctx.quick ? 15_000 : 60_000,
      sampleEveryMs: 500,
      slots: 64,
    };
    const missing = pollerMissing();
    if (missing) return { status: 'skipped', reason: missing, settings, rows: [], runs: [] };
    const bench = await createBenchDatabase(ctx.adminUrl, 'memory', 2);
    let fleet: Fleet | undefined;
    const peaks: number[] = [];
    const uncapped: number[] = [];
    try {
      await loadTasks(bench.db, {
        count: settings.activeTasks - settings.trickle,
        status: 'working',
        remoteTaskId: 'job_not_polled',
        dueFromMs: 86_400_000,
        dueToMs: 2 * 86_400_000,
      });
      await loadDayLongJobs(bench.db, settings.trickle);
      await bench.db.query('VACUUM ANALYZE tasks');
      // First as deployed (k8s sets this heap cap on the poller), then with Node's default heap
      // sizing, which follows the host's memory (24 GiB here) and lets garbage accumulate.
      for (const [nodeOptions, sink] of [
        [DEPLOYED_NODE_OPTIONS, peaks],
        ['', uncapped],
      ] as const) {
        if (sink === uncapped) {
          // A fresh trickle for the second fleet (the first one's jobs died with its demo server).
          await loadDayLongJobs(bench.db, settings.trickle);
        }
        fleet = await startFleet(bench, 1, {
          leaseMs: 30_000,
          pollIntervalMs: settings.pollIntervalMs,
          minPollIntervalMs: settings.pollIntervalMs,
          slots: settings.slots,
          maxConcurrentCalls: settings.slots,
          nodeOptions,
        });
        await waitAllSubmitted(bench, 60_000);
        const pid = fleet.pollers[0].pid;
        for (let run = 0; run < ctx.runs; run++) {
          let peak = 0;
          const end = Date.now() + settings.windowMs / ctx.runs;
          while (Date.now() < end) {
            peak = Math.max(peak, rssMb(pid));
            await sleep(settings.sampleEveryMs);
          }
          sink.push(peak);
          ctx.log(
            `${nodeOptions || 'no heap cap'}: window ${run + 1}: peak RSS ${peak.toFixed(1)} MB`,
          );
        }
        await fleet.stop();
        fleet = undefined;
      }
    } finally {
      await fleet?.stop();
      await bench.drop();
    }
    // The peak over the whole run, not a median: a leak shows as growth from window to window.
    const value = Math.max(...peaks);
    return {
      status: 'ok',
      settings,
      rows: [
        {
          metric: `poller peak RSS over the run (${DEPLOYED_NODE_OPTIONS}, as deployed)`,
          value: round(value),
          unit: 'MB',
          target: '< 200 MB',
          met: value < 200,
        },
        {
          metric: 'growth of the window peak, first to last window (as deployed)',
          value: round(peaks[peaks.length - 1] - peaks[0]),
          unit: 'MB',
        },
        {
          metric: "poller peak RSS over the run (no heap cap: Node's default sizing on this host)",
          value: round(Math.max(...uncapped)),
          unit: 'MB',
        },
      ],
      runs: [...peaks, ...uncapped],
    };
  },
};
