import { ChaosCluster } from './chaos-cluster';
import { ChaosEvidence } from './chaos-evidence';
import { ChaosOptions } from './chaos-options';
import { ChaosVerdict } from './chaos-checker';
import { ChaosRunState } from './chaos-run';
import { failoverFigures } from './failover.report';
import { lateWrites } from './lease-audit.check';

// Enough lines per invariant to diagnose; the full list goes to the run directory.
const SHOWN_PER_INVARIANT = 15;

/** Prints the run's figures and the verdict; returns the number of violations. */
export function printReport(
  options: ChaosOptions,
  cluster: ChaosCluster,
  run: ChaosRunState,
  evidence: ChaosEvidence,
  verdict: ChaosVerdict,
): number {
  const out = (line: string): void => console.log(line);
  const seconds = (run.drainedAt - run.startedAt) / 1000;
  const accepted = run.driver.tasks.filter((t) => t.taskId).length;
  const { injector } = run;
  out(
    `chaos (${options.profile}, seed ${options.seed}): ${options.tasks} tasks planned over ${options.seconds} s`,
  );
  out(
    `faults: poller kills ${injector.count('poller-kill')}, poller pauses ${injector.count('poller-pause')}, ` +
      `postgres restarts ${injector.count('pg-restart')} (down ${options.pgDownMs / 1000} s), upstream restarts ${injector.count('upstream-restart')}, ` +
      `upstream hangs ${injector.count('upstream-hang')} (${options.hangMs / 1000} s)`,
  );
  for (const e of [...injector.events].sort((a, b) => a.start - b.start)) {
    const at = ((e.start - run.startedAt) / 1000).toFixed(1);
    out(`  +${at} s ${e.kind} ${e.target} (${((e.end - e.start) / 1000).toFixed(1)} s)`);
  }
  for (const line of [...injector.skipped, ...injector.errors]) out(`  fault note: ${line}`);
  out(`tasks: ${accepted} accepted; ${stateCounts(run, evidence)}`);
  out(`by toolset: ${toolsetCounts(run)}`);
  out(
    `duration: ${seconds.toFixed(1)} s from first submit to last terminal; ` +
      `${(accepted / seconds).toFixed(1)} tasks/s; API retries ${run.client.retries}`,
  );
  const excused = [...verdict.excused].map(([why, n]) => `${why} ${n}`).join(', ');
  out(`honest crash outcomes: ${excused || 'none'}`);
  out(`tasks a fault reached: ${verdict.reached}`);
  const failover = failoverFigures(evidence);
  if (failover) {
    const resumed =
      failover.claimsResumedMs === undefined ? 'never' : `${failover.claimsResumedMs} ms`;
    out(
      `failover: standby promoted ${failover.promotedMs} ms after the primary crashed, proxy ` +
        `switched at ${failover.switchedMs} ms; claims resumed ${resumed} after the switch`,
    );
    out(
      `failover: tasks lost ${failover.lost.length}, duplicate upstream submits ` +
        `${failover.duplicateSubmits.length}, handles cancelled wrongly ` +
        `${failover.wronglyCancelled.length}, outcome_uncertain ${failover.outcomeUncertain}`,
    );
  }
  const updates = [...evidence.audit.values()].flat();
  const claims = updates.filter((r) => r.new_token && r.new_token !== r.old_token);
  const late = Object.entries(lateWrites(evidence.audit))
    .map(([kind, n]) => `${n} ${kind}`)
    .join(', ');
  out(
    `lease audit: ${updates.length} updates, ${claims.length} claims checked; ` +
      `landed past the lease under the holder's token: ${late}`,
  );
  out(
    `webhooks (subscribed via ${cluster.webhookMode}): ${cluster.receiver.deliveries} deliveries received, ` +
      `${cluster.receiver.badSignatures.length} bad signatures`,
  );
  out(`terminal rows watched: ${run.watch.firstSeen.size} (${run.watch.samples} samples)`);
  const violations = new Map(verdict.violations);
  violations.set('run completed cleanly', [
    ...run.problems,
    ...run.unexpectedExits,
    ...injector.errors,
  ]);
  let total = 0;
  out('invariants:');
  for (const [name, list] of violations) {
    total += list.length;
    out(
      `  ${list.length === 0 ? 'ok  ' : 'FAIL'} ${name}${list.length ? ` (${list.length})` : ''}`,
    );
    for (const line of list.slice(0, SHOWN_PER_INVARIANT)) out(`       - ${line}`);
    if (list.length > SHOWN_PER_INVARIANT)
      out(`       … ${list.length - SHOWN_PER_INVARIANT} more`);
  }
  out(total === 0 ? 'CHAOS PASS: 0 violations' : `CHAOS FAIL: ${total} violations`);
  return total;
}

function stateCounts(run: ChaosRunState, evidence: ChaosEvidence): string {
  const counts = new Map<string, number>();
  for (const driven of run.driver.tasks) {
    const task = driven.taskId ? evidence.tasks.get(driven.taskId) : undefined;
    const key = task
      ? `${task.status}${task.error_code ? `/${task.error_code}` : ''}`
      : 'not accepted';
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

function toolsetCounts(run: ChaosRunState): string {
  const counts = new Map<string, number>();
  for (const t of run.driver.tasks)
    counts.set(t.plan.toolset.name, (counts.get(t.plan.toolset.name) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${k} ${n}`).join(', ');
}
