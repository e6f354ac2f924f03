/**
 * API submit, two or more builds side by side in one run (A/B): `node dist/bench/api-submit-ab.js
 * NAME=PATH/apps/api/main.js NAME=PATH/apps/api/main.js …`, each PATH a build's dist (a copy of
 * dist/ kept beside the worktree, e.g. `cp -a dist .data/before/`). One database and one poller
 * working the tasks, as `api-submit`; the API of every build is started on it, warmed up (3 s at
 * 100/s), then rounds of `AB_RATE` submits/s (300) for `AB_SECONDS` (5) per build, the order
 * reversed every other round, `AB_ROUNDS` (3) rounds. Prints each phase's API CPU per submit
 * (user and system time from /proc), p50 and p99, and the load average, then each build's median.
 * `AB_ENV` sets one build's environment, e.g. `{"before":{"NODE_OPTIONS":"--perf-basic-prof"}}`.
 * Why: on a shared machine two runs of `npm run bench` minutes apart differ more than most
 * changes do; phases interleaved in one run share the machine's load (docs/benchmarks.md,
 * "API CPU per submit, fourth pass").
 */
import { readFileSync } from 'node:fs';
import { SUBMIT_TOOLSET, submitRequest, waitForToolset } from './api-submit.bench';
import { RunningApi, startApi } from './lib/api-process';
import { OpenLoopGenerator, OpenLoopRequest, summarizePhase } from './lib/open-loop';
import { Fleet, startFleet } from './lib/poller-fleet';
import { createBenchDatabase } from './lib/bench-db';
import { median, round, sleep } from './lib/stats';

interface Build {
  name: string;
  main: string;
  api?: RunningApi;
  request?: OpenLoopRequest;
  cpuMs: number[];
}

/** User and system CPU seconds of a process, from /proc/<pid>/stat (ticks of 1/100 s). */
function cpuTimes(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

/** The answers other than 201, e.g. " (503: 1)", so a lost submit is seen, not only counted. */
function otherAnswers(statuses: Record<string, number>): string {
  const others = Object.entries(statuses).filter(([status]) => status !== '201');
  return others.length === 0 ? '' : ` (${others.map(([s, n]) => `${s}: ${n}`).join(', ')})`;
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

async function main(): Promise<void> {
  const builds: Build[] = process.argv.slice(2).map((arg) => {
    const [name, main] = arg.split('=', 2);
    if (!name || !main) throw new Error(`expected NAME=PATH/apps/api/main.js, got "${arg}"`);
    return { name, main, cpuMs: [] };
  });
  if (builds.length === 0) throw new Error('name at least one build: NAME=PATH/apps/api/main.js');
  const envs = JSON.parse(process.env.AB_ENV ?? '{}') as Record<string, Record<string, string>>;
  const rounds = Number(process.env.AB_ROUNDS ?? 3);
  const rate = Number(process.env.AB_RATE ?? 300);
  const seconds = Number(process.env.AB_SECONDS ?? 5);
  const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

  const bench = await createBenchDatabase(adminUrl, 'api_submit_ab', 2);
  let fleet: Fleet | undefined;
  let generator: OpenLoopGenerator | undefined;
  try {
    fleet = await startFleet(bench, 1, {
      leaseMs: 30_000,
      pollIntervalMs: 1_000,
      minPollIntervalMs: 1_000,
      slots: 64,
      maxConcurrentCalls: 32,
      demoJsonResponse: false,
    });
    await waitForToolset(bench, SUBMIT_TOOLSET);
    generator = await OpenLoopGenerator.start();
    for (const build of builds) {
      build.api = await startApi(bench.url, envs[build.name] ?? {}, build.main);
      build.request = await submitRequest(bench, build.api.url, 'ab');
    }
    let index = 0;
    const phase = async (build: Build, phaseRate: number, phaseSeconds: number) => {
      const plan = {
        request: build.request!,
        ratePerSecond: phaseRate,
        seconds: phaseSeconds,
        firstIndex: index,
      };
      index += Math.round(phaseRate * phaseSeconds);
      const load = loadAverage();
      const before = cpuTimes(build.api!.pid);
      const report = await generator!.run(plan);
      const figures = summarizePhase(plan, report, 201);
      const after = cpuTimes(build.api!.pid);
      const perSubmit = (s: number) => round((s * 1000) / figures.sent);
      const user = perSubmit(after.user - before.user);
      const system = perSubmit(after.system - before.system);
      return { ...figures, statuses: report.statuses, user, system, cpuMs: user + system, load };
    };
    for (const build of builds) await phase(build, 100, 3);
    for (let r = 0; r < rounds; r++) {
      for (const build of r % 2 === 0 ? builds : [...builds].reverse()) {
        await sleep(2_000); // the poller catches up: each phase starts without a backlog
        const p = await phase(build, rate, seconds);
        build.cpuMs.push(p.cpuMs);
        console.log(
          `round ${r + 1} ${build.name}: ${round(p.cpuMs)} ms CPU/submit (user ${p.user}, ` +
            `system ${p.system}), p50 ${round(p.p50Ms)} ms, p99 ${round(p.p99Ms)} ms, ` +
            `${p.ok}/${p.sent} created${otherAnswers(p.statuses)}, load average ${p.load}`,
        );
      }
    }
    for (const build of builds) {
      console.log(
        `${build.name}: median ${round(median(build.cpuMs))} ms CPU/submit ` +
          `(${build.cpuMs.map((v) => round(v)).join(', ')})`,
      );
    }
  } finally {
    generator?.stop();
    for (const build of builds) await build.api?.stop();
    await fleet?.stop();
    await bench.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
