/**
 * The chaos run: `npm run chaos [-- --short | --fault failover] [--tasks N] [--seconds S] [--seed X]`.
 * Starts a whole gateway (own Postgres, two API replicas, three pollers, demo upstreams over HTTP
 * and stdio), submits scripted tasks while it kills, pauses and restarts its parts, then checks
 * the invariants of docs/chaos.md. Exits 1 on any violation. See docs/chaos.md.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
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
  const cluster = await ChaosCluster.start(dir, options.fault);
  let violations = 1;
  try {
    await cluster.subscribeWebhooks();
    const run = await runChaos(cluster, options);
    const evidence = await collectEvidence(cluster, run);
    violations = printReport(options, cluster, run, evidence, checkInvariants(evidence));
    if (violations > 0) keepEvidence(evidence, dir);
  } finally {
    keepPollerLogs(cluster, dir);
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

function keepPollerLogs(cluster: ChaosCluster, dir: string): void {
  mkdirSync(join(dir, 'logs'), { recursive: true });
  for (const slot of cluster.pollers) {
    for (const poller of [...slot.retired, ...(slot.current ? [slot.current] : [])]) {
      const lines = poller.logs.map((line) => JSON.stringify(line)).join('\n');
      writeFileSync(join(dir, 'logs', `${poller.workerId}.jsonl`), `${lines}\n`);
      const stderr = poller.stderr();
      if (stderr !== '') writeFileSync(join(dir, 'logs', `${poller.workerId}.stderr`), stderr);
    }
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('chaos: run aborted:', error);
    process.exit(2);
  },
);
