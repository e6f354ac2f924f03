/**
 * The chaos run: `npm run chaos [-- --short | --fault failover] [--tasks N] [--seconds S] [--seed X]`.
 * Starts a whole gateway (own Postgres, two API replicas, three pollers, demo upstreams over HTTP
 * and stdio), submits scripted tasks while it kills, pauses and restarts its parts, then checks
 * the invariants of docs/chaos.md. Exits 1 on any violation. See docs/chaos.md.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChaosCluster } from './chaos-cluster';
import { checkInvariants } from './chaos-checker';
import { ChaosEvidence } from './chaos-evidence';
import { parseChaosOptions } from './chaos-options';
import { printReport } from './chaos-report';
import { runChaos } from './chaos-run';
import { collectEvidence } from './evidence.collector';

const ROOT = join(__dirname, '..', '..', '..');

async function main(): Promise<number> {
  const options = parseChaosOptions(process.argv.slice(2));
  const dir = join(ROOT, '.data', `chaos-${process.pid}`);
  console.log(
    `chaos: starting (seed ${options.seed}; replay with --seed ${options.seed}); work dir ${dir}`,
  );
  // A cluster that fails to start keeps its work directory: every replica's output is in logs/,
  // and the error names the one that failed with its last lines.
  const cluster = await ChaosCluster.start(dir, options.fault).catch((error: unknown) => {
    console.log(`chaos: logs kept in ${join(dir, 'logs')}`);
    throw error;
  });
  let violations = 1;
  try {
    await cluster.subscribeWebhooks();
    const run = await runChaos(cluster, options);
    const evidence = await collectEvidence(cluster, run);
    violations = printReport(options, cluster, run, evidence, checkInvariants(evidence));
    if (violations > 0) keepEvidence(evidence, dir);
  } finally {
    cluster.keepLogs();
    await cluster.stop();
    rmSync(join(dir, 'pg'), { recursive: true, force: true });
    // A passing run leaves nothing behind; a failing one keeps the logs and upstream state.
    if (violations === 0) rmSync(dir, { recursive: true, force: true });
    else console.log(`chaos: logs and upstream state kept in ${dir}`);
  }
  return violations === 0 ? 0 : 1;
}

/** The final rows and the lease audit, for diagnosing a failed run after its database is gone. */
function keepEvidence(evidence: ChaosEvidence, dir: string): void {
  writeFileSync(join(dir, 'tasks.json'), JSON.stringify([...evidence.tasks.values()], null, 1));
  writeFileSync(
    join(dir, 'audit.json'),
    JSON.stringify(Object.fromEntries(evidence.audit), null, 1),
  );
  writeFileSync(join(dir, 'faults.json'), JSON.stringify(evidence.faults, null, 1));
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('chaos: run aborted:', error);
    process.exit(2);
  },
);
