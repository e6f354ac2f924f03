/**
 * A poller's and an API's start, two or more builds side by side in one run (A/B):
 * `node dist/bench/start-ab.js NAME=PATH NAME=PATH …`, each PATH a build's dist/ (another
 * worktree's, or a copy kept beside this one). Every round starts each build's poller, then its
 * API, the order turned one place each round, `AB_ROUNDS` (6) rounds; each process runs its
 * build's loader and bundle (dist/apps/<app>/main.js), with the code cache its earlier starts
 * kept. Reads the CPU to ready (as `start-cost`) and the resident memory `AB_SETTLE_MS` (3,000)
 * after ready, from /proc; prints each round, then each build's medians.
 * Why: `start-cost` compares the forms of one build; a change to the loader or the bundles needs
 * the build before beside it (docs/operations.md, "Process start and the code cache").
 */
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startApi } from './lib/api-process';
import { createBenchDatabase } from './lib/bench-db';
import {
  cpuSeconds,
  rssMb,
  START_MEASURED_POLLER,
  startDemoServer,
  startPoller,
  writeToolsetFile,
} from './lib/poller-harness';
import { median, round } from './lib/stats';

type Kind = 'poller' | 'api';
interface Reading {
  build: string;
  kind: Kind;
  cpuMs: number;
  rssMb: number;
}

async function main(): Promise<void> {
  const builds = process.argv.slice(2).map((arg) => {
    const [name, dist] = arg.split('=', 2);
    if (!name || !dist) throw new Error(`expected NAME=PATH (a build's dist/), got "${arg}"`);
    return { name, apps: join(resolve(dist), 'apps') };
  });
  if (builds.length === 0) throw new Error("name at least one build: NAME=PATH (a build's dist/)");
  const rounds = Number(process.env.AB_ROUNDS ?? 6);
  const settleMs = Number(process.env.AB_SETTLE_MS ?? 3_000);
  const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

  const bench = await createBenchDatabase(adminUrl, 'start_ab', 1);
  const upstream = await startDemoServer();
  const toolsetFile = writeToolsetFile(8);
  const readings: Reading[] = [];
  /** Starts one process, reads it at ready and after the settle time, stops it. */
  const measure = async (
    build: string,
    kind: Kind,
    start: () => Promise<{ pid: number; stop(): Promise<void> }>,
  ): Promise<Reading> => {
    const started = await start();
    const cpuMs = cpuSeconds(started.pid) * 1000;
    await sleep(settleMs);
    const reading = { build, kind, cpuMs, rssMb: rssMb(started.pid) };
    await started.stop();
    return reading;
  };
  try {
    for (let run = 0; run < rounds; run++) {
      const shift = run % builds.length;
      const line: string[] = [];
      for (const { name, apps } of [...builds.slice(shift), ...builds.slice(0, shift)]) {
        const poller = await measure(name, 'poller', () =>
          startPoller(
            {
              databaseUrl: bench.url,
              demoUrl: upstream.url,
              toolsetFile,
              ...START_MEASURED_POLLER,
              main: join(apps, 'poller', 'main.js'),
            },
            20,
          ),
        );
        const api = await measure(name, 'api', () =>
          startApi(bench.url, {}, join(apps, 'api', 'main.js')),
        );
        readings.push(poller, api);
        line.push(
          `${name}: poller ${Math.round(poller.cpuMs)} ms, ${round(poller.rssMb)} MB; ` +
            `api ${Math.round(api.cpuMs)} ms, ${round(api.rssMb)} MB`,
        );
      }
      console.log(`round ${run + 1}/${rounds}: ${line.join(' | ')}`);
    }
  } finally {
    await upstream.stop();
    await bench.drop();
  }
  for (const { name } of builds) {
    for (const kind of ['poller', 'api'] as const) {
      const mine = readings.filter((r) => r.build === name && r.kind === kind);
      console.log(
        `${name} ${kind}: CPU to ready median ${Math.round(median(mine.map((r) => r.cpuMs)))} ms, ` +
          `resident ${settleMs} ms after median ${round(median(mine.map((r) => r.rssMb)))} MB`,
      );
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
