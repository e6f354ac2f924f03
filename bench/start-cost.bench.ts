/**
 * What each of the gateway's processes costs to start: CPU (user + system, from /proc) and wall
 * time from spawn until it can do its work. Pods pay this on every rollout and reschedule, and
 * `npm test` pays it about 300 times a run (pollers, APIs, CLIs and demo servers), a large share
 * of the suite's CPU (docs/benchmarks.md, "Process start").
 *
 * Ready means: the API printed "api listening"; the poller answered /healthz/ready; a stdio demo
 * server answered `initialize`; an HTTP demo server printed its URL. The CLI (`migrate --check`,
 * the apps' init container) is measured to its exit, from this process's reaped-children CPU.
 * The kinds take turns within each round, so a change in the machine's load touches all of them.
 *
 * Each kind starts in three forms, one right after the other (the order turns by round): the
 * bundle as it runs (dist/apps/<app>/main.js, the loader that runs bundle.js with V8's code of it
 * kept from an earlier start; scripts/app-loader.ts), the bundle without that cache (bundle.js run
 * directly), and tsc's unbundled entry (dist/apps/<app>/src/main.js). The ratios are medians of
 * the rounds' ratios of CPU. A start that finds no kept code writes it (the first, on a new build).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { demoStdioCommand } from '../test/helpers/processes';
import { startApi } from './lib/api-process';
import { createBenchDatabase } from './lib/bench-db';
import {
  cpuSeconds,
  START_MEASURED_POLLER,
  startDemoServer,
  startPoller,
  writeToolsetFile,
} from './lib/poller-harness';
import { median, round } from './lib/stats';
import { Benchmark, ResultRow } from './lib/types';

const APPS = join(__dirname, '..', 'apps');

/** The forms of each app the build writes, and the file each form runs. */
const FORMS = ['bundle', 'bundle without the code cache', 'unbundled'] as const;
type Form = (typeof FORMS)[number];
const FILE_OF: Record<Form, string> = {
  bundle: 'main.js',
  'bundle without the code cache': 'bundle.js',
  unbundled: join('src', 'main.js'),
};
function mainOf(app: 'api' | 'poller' | 'demo-server' | 'cli', form: Form): string {
  return join(APPS, app, FILE_OF[form]);
}

const KINDS = [
  'poller',
  'api',
  'cli migrate --check',
  'demo server (stdio)',
  'demo server (http)',
] as const;
type Kind = (typeof KINDS)[number];

/** One start: CPU and wall milliseconds to ready (to exit for the CLI). */
interface Start {
  kind: Kind;
  form: Form;
  round: number;
  cpuMs: number;
  wallMs: number;
}

export const startCostBench: Benchmark = {
  name: 'start-cost',
  title: 'Process start: CPU and wall time to ready, per kind of process',
  async run(ctx) {
    const rounds = ctx.quick ? 5 : 15;
    const bench = await createBenchDatabase(ctx.adminUrl, 'start', 1);
    // The pollers' upstream: one HTTP demo server for the whole run, started before the clock.
    const upstream = await startDemoServer();
    const starts: Start[] = [];
    try {
      const toolsetFile = writeToolsetFile(8);
      type Measured = Omit<Start, 'kind' | 'form' | 'round'>;
      const measure: Record<Kind, (form: Form) => Promise<Measured>> = {
        poller: (form) =>
          timed(async () => {
            const poller = await startPoller(
              {
                databaseUrl: bench.url,
                demoUrl: upstream.url,
                toolsetFile,
                ...START_MEASURED_POLLER,
                main: mainOf('poller', form),
              },
              20,
            );
            return { pid: poller.pid, stop: poller.stop };
          }),
        api: (form) =>
          timed(async () => {
            const api = await startApi(bench.url, {}, mainOf('api', form));
            return { pid: api.pid, stop: api.stop };
          }),
        'cli migrate --check': (form) => cliToExit(bench.url, mainOf('cli', form)),
        'demo server (stdio)': (form) => timed(() => stdioDemoInitialized(form)),
        'demo server (http)': (form) =>
          timed(async () => {
            const demo = await startDemoServer(false, mainOf('demo-server', form));
            return { pid: demo.pid, stop: demo.stop };
          }),
      };
      for (let round = 0; round < rounds; round++) {
        const order = FORMS.map((_, i) => FORMS[(i + round) % FORMS.length]);
        for (const kind of KINDS) {
          for (const form of order)
            starts.push({ kind, form, round, ...(await measure[kind](form)) });
        }
        ctx.log(`round ${round + 1}/${rounds} done`);
      }
    } finally {
      await upstream.stop();
      await bench.drop();
    }
    return {
      status: 'ok',
      settings: {
        rounds,
        node: process.version,
        env: "the benchmarks' own (API: NODE_ENV=production, JSON logs at info)",
      },
      rows: KINDS.flatMap((kind) => summarize(kind, starts)),
      runs: starts,
    };
  },
};

function summarize(kind: Kind, starts: Start[]): ResultRow[] {
  const to = kind.startsWith('cli') ? 'to exit' : 'to ready';
  const of = (form: Form) => starts.filter((s) => s.kind === kind && s.form === form);
  const rows: ResultRow[] = FORMS.flatMap((form) => {
    const label = form === 'bundle' ? kind : `${kind}, ${form}`;
    const mine = of(form);
    return [
      { metric: `${label}: CPU ${to}`, value: round(median(mine.map((s) => s.cpuMs))), unit: 'ms' },
      {
        metric: `${label}: wall ${to}`,
        value: round(median(mine.map((s) => s.wallMs))),
        unit: 'ms',
      },
    ];
  });
  const ratio = (to: Form, label: string): ResultRow => {
    const base = new Map(of(to).map((s) => [s.round, s.cpuMs]));
    const ratios = of('bundle').map((s) => s.cpuMs / base.get(s.round)!);
    return {
      metric: `${kind}: CPU, bundle / ${label}`,
      value: round(median(ratios), 3),
      unit: '×',
    };
  };
  rows.push(ratio('bundle without the code cache', 'without the cache'));
  rows.push(ratio('unbundled', 'unbundled'));
  return rows;
}

/** Runs `start` (which resolves once its process is ready), reads that process's CPU, stops it. */
async function timed(
  start: () => Promise<{ pid: number; stop(): Promise<void> }>,
): Promise<Omit<Start, 'kind' | 'form' | 'round'>> {
  const begun = performance.now();
  const started = await start();
  const wallMs = performance.now() - begun;
  const cpuMs = cpuSeconds(started.pid) * 1000;
  await started.stop();
  return { cpuMs, wallMs };
}

/**
 * A stdio demo server as a poller spawns one, until it has answered `initialize` (the SDK client's
 * handshake, as the poller's); stopped as the poller stops one, by closing the session.
 */
async function stdioDemoInitialized(form: Form): Promise<{ pid: number; stop(): Promise<void> }> {
  const command =
    form === 'bundle'
      ? demoStdioCommand()
      : { command: process.execPath, args: [mainOf('demo-server', form), '--transport', 'stdio'] };
  const transport = new StdioClientTransport({ ...command, stderr: 'ignore' });
  const client = new Client({ name: 'start-cost-bench', version: '1' });
  await client.connect(transport);
  return { pid: transport.pid!, stop: () => client.close() };
}

/**
 * `migrate --check` to its exit. Its CPU is read from this process's reaped-children counters
 * (cutime + cstime), which grow by exactly the child's CPU when it is waited for: nothing else
 * this process started ends meanwhile.
 */
async function cliToExit(
  databaseUrl: string,
  main: string,
): Promise<Omit<Start, 'kind' | 'form' | 'round'>> {
  const before = reapedChildrenSeconds();
  const begun = performance.now();
  const child = spawn(process.execPath, [main, 'migrate', '--check'], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: 'ignore',
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const wallMs = performance.now() - begun;
  if (code !== 0) throw new Error(`migrate --check exited with ${code}`);
  return { cpuMs: (reapedChildrenSeconds() - before) * 1000, wallMs };
}

/** cutime + cstime of this process: the CPU of its children that have exited and been reaped. */
function reapedChildrenSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}
