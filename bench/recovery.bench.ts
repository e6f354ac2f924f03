/**
 * Recovery: SIGKILL a poller while it holds claims; time from the kill until every row it held
 * was claimed again (claim_count up) by the surviving poller. Target: lease + poll interval.
 * Also, per orphan, the time from its lease's expiry to its new claim: the survivor's wake-up at
 * the expiry plus whatever backlog it has (the target is the poll interval, docs/leases.md,
 * invariant 3). Postgres runs on this host, so its clock and ours agree.
 */
import { createBenchDatabase } from './lib/bench-db';
import { loadDayLongJobs } from './lib/load-tasks';
import { Fleet, startFleet, waitAllSubmitted } from './lib/poller-fleet';
import { pollerMissing } from './lib/poller-gate';
import { median, round, sleep } from './lib/stats';
import { Benchmark } from './lib/types';

interface Kill {
  orphans: number;
  recoveredMs: number;
  /** Per orphan: its new claim seen (ms) after its lease expired, median and worst. */
  expiryLagMedianMs: number;
  expiryLagWorstMs: number;
}

export const recoveryBench: Benchmark = {
  name: 'recovery',
  title: 'Recovery after SIGKILL of a poller holding claims',
  async run(ctx) {
    const settings = {
      tasks: 2_000,
      pollers: 2,
      leaseMs: ctx.quick ? 5_000 : 10_000,
      pollIntervalMs: 1_000,
      slots: 128,
      orphans: 'rows whose lease_owner is the killed worker 300 ms after the kill',
    };
    const missing = pollerMissing();
    if (missing) return { status: 'skipped', reason: missing, settings, rows: [], runs: [] };
    const kills: Kill[] = [];
    for (let run = 0; run < ctx.runs; run++) {
      const bench = await createBenchDatabase(ctx.adminUrl, 'recovery', 2);
      let fleet: Fleet | undefined;
      try {
        await loadDayLongJobs(bench.db, settings.tasks);
        fleet = await startFleet(bench, settings.pollers, {
          leaseMs: settings.leaseMs,
          pollIntervalMs: settings.pollIntervalMs,
          minPollIntervalMs: settings.pollIntervalMs,
          slots: settings.slots,
          maxConcurrentCalls: settings.slots,
        });
        await waitAllSubmitted(bench, 120_000);
        const victim = fleet.pollers[0];
        const worker = await bench.db.query<{ id: string }>(
          `SELECT id FROM workers WHERE pid = $1 AND stopped_at IS NULL`,
          [victim.pid],
        );
        if (worker.length !== 1) throw new Error(`no live workers row for pid ${victim.pid}`);
        // Kill at a moment the victim holds claims (it polls ~1,000 rows/s, so this is quick).
        const deadline = Date.now() + 30_000;
        for (;;) {
          const held = await bench.db.query(
            `SELECT 1 FROM task_rows WHERE lease_owner = $1 LIMIT 1`,
            [worker[0].id],
          );
          if (held.length > 0 || Date.now() > deadline) break;
          await sleep(5);
        }
        const killedAt = Date.now();
        victim.child.kill('SIGKILL');
        // Statements already on the wire finish server-side; read the orphans after them.
        await sleep(300);
        const orphans = await bench.db.query<{
          id: string;
          claim_count: number;
          expires_ms: string;
        }>(
          `SELECT id, claim_count, extract(epoch FROM lease_expires_at) * 1000 AS expires_ms
             FROM task_rows WHERE lease_owner = $1 AND lease_token IS NOT NULL`,
          [worker[0].id],
        );
        const expiresAt = new Map(orphans.map((o) => [o.id, Number(o.expires_ms)]));
        const seenAt = new Map<string, number>();
        let recoveredMs = Number.NaN;
        const until = Date.now() + settings.leaseMs * 4;
        while (orphans.length > 0 && Date.now() < until) {
          const moved = await bench.db.query<{ id: string }>(
            `SELECT t.id FROM task_rows t JOIN unnest($1::text[], $2::int[]) AS o(id, claims)
                ON t.id = o.id WHERE t.claim_count > o.claims`,
            [orphans.map((o) => o.id), orphans.map((o) => o.claim_count)],
          );
          const now = Date.now();
          for (const { id } of moved) if (!seenAt.has(id)) seenAt.set(id, now);
          if (seenAt.size === orphans.length) {
            recoveredMs = now - killedAt;
            break;
          }
          await sleep(20);
        }
        const lags = [...seenAt].map(([id, at]) => at - expiresAt.get(id)!);
        const expiryLagWorstMs = lags.length > 0 ? Math.max(...lags) : Number.NaN;
        kills.push({
          orphans: orphans.length,
          recoveredMs,
          expiryLagMedianMs: median(lags),
          expiryLagWorstMs,
        });
        ctx.log(
          `run ${run + 1}: ${orphans.length} orphaned claims, all re-attempted after ${recoveredMs} ms; ` +
            `lease expiry → new claim: median ${round(median(lags))} ms, worst ${round(expiryLagWorstMs)} ms`,
        );
      } finally {
        await fleet?.stop();
        await bench.drop();
      }
    }
    const bound = settings.leaseMs + settings.pollIntervalMs;
    const worst = Math.max(...kills.map((k) => k.recoveredMs));
    return {
      status: 'ok',
      settings,
      rows: [
        {
          metric: 'orphaned claims at the kill',
          value: median(kills.map((k) => k.orphans)),
          unit: 'rows',
        },
        {
          metric: 'kill → every orphan attempted again (median)',
          value: round(median(kills.map((k) => k.recoveredMs))),
          unit: 'ms',
        },
        {
          metric: `kill → every orphan attempted again (worst of ${kills.length})`,
          value: round(worst),
          unit: 'ms',
          target: `≤ lease + poll interval = ${bound} ms`,
          met: worst <= bound,
        },
        {
          metric: 'lease expiry → orphan claimed again (median of run medians)',
          value: round(median(kills.map((k) => k.expiryLagMedianMs))),
          unit: 'ms',
        },
        {
          metric: `lease expiry → orphan claimed again (worst of ${kills.length})`,
          value: round(Math.max(...kills.map((k) => k.expiryLagWorstMs))),
          unit: 'ms',
          target: `≤ poll interval = ${settings.pollIntervalMs} ms`,
          met: Math.max(...kills.map((k) => k.expiryLagWorstMs)) <= settings.pollIntervalMs,
        },
      ],
      runs: kills,
    };
  },
};
