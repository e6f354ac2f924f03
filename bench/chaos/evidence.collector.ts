import { readStateFile } from '../../apps/demo-server/src/state-file.reader';
import { demoStats } from '../../test/helpers/processes';
import { ChaosCluster } from './chaos-cluster';
import {
  ChaosEvidence,
  FINAL_TASKS_SQL,
  FinalTask,
  groupAudit,
  UpstreamJob,
} from './chaos-evidence';
import { ChaosRunState } from './chaos-run';
import { AuditRow, READ_AUDIT_SQL } from './lease-audit.sql';
import { CHAOS_POLLER_ENV } from './poller-slot';

/**
 * Reads what the checker needs once the run has drained: the final rows and the lease audit from
 * Postgres, the submit counters through demo_stats (the upstreams' own interface), the jobs from
 * the upstreams' state files, and what the webhook receiver got.
 */
export async function collectEvidence(
  cluster: ChaosCluster,
  run: ChaosRunState,
): Promise<ChaosEvidence> {
  const tasks = await cluster.db.queryPatiently<FinalTask & Record<string, unknown>>(
    FINAL_TASKS_SQL,
  );
  const audit = await cluster.db.queryPatiently<AuditRow & Record<string, unknown>>(READ_AUDIT_SQL);
  const submitsByTag = new Map<string, number>();
  const cancelsByTag = new Map<string, number>();
  const upstreamJobs: UpstreamJob[] = [];
  for (const upstream of [cluster.upstreamA, cluster.upstreamB]) {
    const stats = await demoStats(upstream.url);
    for (const [tag, entry] of Object.entries(stats.by_tag)) {
      submitsByTag.set(tag, (submitsByTag.get(tag) ?? 0) + entry.submits);
      cancelsByTag.set(tag, (cancelsByTag.get(tag) ?? 0) + entry.cancels);
    }
    // Snapshot and journal, as the server itself reads them (docs/demo-server.md, --state-file).
    const state = readStateFile(upstream.stateFile);
    upstreamJobs.push(...((state?.jobs ?? []) as UpstreamJob[]));
  }
  return {
    driven: run.driver.tasks,
    tasks: new Map(tasks.map((t) => [t.id, t])),
    audit: groupAudit(audit),
    faults: run.injector.events,
    submitsByTag,
    cancelsByTag,
    failover: run.injector.failover,
    upstreamJobs,
    webhooks: cluster.receiver,
    terminalChanges: await run.watch.changed(),
    leaseMs: Number(CHAOS_POLLER_ENV.LEASE_MS),
  };
}
