/**
 * The benchmark runner: `npm run bench -- [--quick] [--only NAME[,NAME]]`.
 * Runs each benchmark (median of several runs), writes bench/results/<name>.json and rewrites the
 * sections of docs/benchmarks.md's results table that belong to the benchmarks it ran.
 * BENCH_ADMIN_URL picks the Postgres server (a superuser URL; each benchmark creates and drops
 * its own `bench_*` database).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiSubmitBench } from './api-submit.bench';
import { batchOfOneBench } from './batch-of-one.bench';
import { submitQuotaBench } from './submit-quota.bench';
import { claimGrowthBench } from './claim-growth.bench';
import { demoServerBench } from './demo-server.bench';
import { endToEndBench } from './end-to-end.bench';
import { fairShareBench } from './fair-share.bench';
import { frontDoorBench } from './front-door.bench';
import { leaseCostBench } from './lease-cost.bench';
import { leaseEngineBench } from './lease-engine.bench';
import { memoryBench } from './memory.bench';
import { recoveryBench } from './recovery.bench';
import { startCostBench } from './start-cost.bench';
import { steadyPollingBench } from './steady-polling.bench';
import { upstreamFetchBench } from './upstream-fetch.bench';
import { upstreamPushBench } from './upstream-push.bench';
import { rewriteDocsTable } from './lib/docs-table';
import { describeMachine } from './lib/machine';
import { BenchResult, Benchmark } from './lib/types';

const ROOT = join(__dirname, '..', '..');
const RESULTS = join(ROOT, 'bench', 'results');
const DOCS = join(ROOT, 'docs', 'benchmarks.md');
const BENCHMARKS: Benchmark[] = [
  leaseEngineBench,
  leaseCostBench,
  batchOfOneBench,
  claimGrowthBench,
  fairShareBench,
  steadyPollingBench,
  upstreamPushBench,
  upstreamFetchBench,
  recoveryBench,
  memoryBench,
  frontDoorBench,
  demoServerBench,
  apiSubmitBench,
  submitQuotaBench,
  endToEndBench,
  startCostBench,
];

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const onlyIndex = args.indexOf('--only');
  const only = onlyIndex >= 0 ? (args[onlyIndex + 1] ?? '').split(',') : undefined;
  const unknown = only?.filter((name) => !BENCHMARKS.some((b) => b.name === name)) ?? [];
  if (unknown.length > 0) {
    throw new Error(`unknown benchmark(s) ${unknown.join(', ')}; known: ${names()}`);
  }
  const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const command = `npm run bench --${args.length ? ` ${args.join(' ')}` : ''}`;
  const machine = await describeMachine(adminUrl);
  console.log(
    `${machine.cpu}, ${machine.cores} cores; Node ${machine.node}; PostgreSQL ${machine.postgres}`,
  );
  mkdirSync(RESULTS, { recursive: true });
  let failed = false;
  const ran: BenchResult[] = [];
  for (const bench of BENCHMARKS.filter((b) => !only || only.includes(b.name))) {
    console.log(`\n== ${bench.name}: ${bench.title}`);
    const date = new Date().toISOString();
    try {
      const outcome = await bench.run({
        quick,
        runs: 3,
        adminUrl,
        command,
        log: (message) => console.log(`  ${bench.name}: ${message}`),
      });
      const result: BenchResult = {
        name: bench.name,
        title: bench.title,
        command,
        date,
        ...outcome,
      };
      ran.push(result);
      writeFileSync(
        join(RESULTS, `${bench.name}.json`),
        `${JSON.stringify({ machine, ...result }, null, 2)}\n`,
      );
      if (result.status === 'skipped') console.log(`  skipped: ${result.reason}`);
      for (const row of result.rows) {
        const verdict =
          row.met === undefined ? '' : row.met ? '  [target met]' : '  [TARGET MISSED]';
        console.log(`  ${row.metric}: ${row.value} ${row.unit}${verdict}`);
      }
    } catch (error) {
      failed = true;
      console.error(`  ${bench.name} failed:`, error);
    }
  }
  // Only the sections of the benchmarks that ran change; the rest stay as the docs have them.
  await rewriteDocsTable(
    DOCS,
    machine,
    ran,
    BENCHMARKS.map((b) => b.title),
  );
  console.log(`\nwrote ${RESULTS} and the table in ${DOCS}`);
  if (failed) process.exitCode = 1;
}

function names(): string {
  return BENCHMARKS.map((b) => b.name).join(', ');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
