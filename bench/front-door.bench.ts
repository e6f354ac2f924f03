/**
 * The MCP front door's cost against the HTTP API's, in the same run: a task-augmented
 * `tools/call` (2025-11-25, answered with the created task) against `POST /v1/.../tasks`, and
 * `tasks/get` against `GET /v1/.../tasks/{id}`, each at one fixed offered rate (open loop: a
 * request every 1/rate s whether or not the last one answered). Reports p50/p99 latency and the
 * API process's CPU per call (utime + stime from /proc). Target: the MCP face within 1.5× of the
 * HTTP API's CPU per call. No poller runs, so tasks stay queued: this measures the API alone.
 */
import { readFileSync } from 'node:fs';
import { Contract } from '@app/common';
import { ApiKeyRepository, CatalogRepository } from '@app/persistence';
import { RunningApi, startApi } from './lib/api-process';
import { createBenchDatabase } from './lib/bench-db';
import { median, quantile, round, sleep } from './lib/stats';
import { Benchmark, ResultRow } from './lib/types';

const TICKS_PER_SECOND = 100;

interface Phase {
  name: string;
  calls: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerCall: number;
}

type Send = (i: number) => Promise<boolean>;

export const frontDoorBench: Benchmark = {
  name: 'front-door',
  title: 'MCP front door vs HTTP API: create and read a task at a fixed rate',
  async run(ctx) {
    const settings = {
      ratePerSecond: 40,
      seconds: ctx.quick ? 5 : 15,
      warmupCalls: 200,
      runs: ctx.quick ? 1 : ctx.runs,
    };
    const runs: Phase[][] = [];
    for (let run = 0; run < settings.runs; run++) {
      const bench = await createBenchDatabase(ctx.adminUrl, 'front_door', 2);
      let api: RunningApi | undefined;
      try {
        await new CatalogRepository(bench.db).publish([
          {
            name: 'bench',
            server: 'bench-srv',
            contract: Contract.SyncCall,
            description: 'bench',
            inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
            available: true,
            unavailableReason: null,
          },
        ]);
        const key = (await new ApiKeyRepository(bench.db).create('bench', 'bench')).key;
        api = await startApi(bench.url);
        const phases = await measure(api.url, key, api.pid, settings, ctx.log);
        runs.push(phases);
      } finally {
        await api?.stop();
        await bench.drop();
      }
    }
    const figure = (name: string, pick: (p: Phase) => number): number =>
      round(median(runs.map((phases) => pick(phases.find((p) => p.name === name)!))));
    const rows: ResultRow[] = [];
    for (const name of ['http create', 'mcp create', 'http get', 'mcp get']) {
      rows.push({ metric: `${name} p50`, value: figure(name, (p) => p.p50Ms), unit: 'ms' });
      rows.push({ metric: `${name} p99`, value: figure(name, (p) => p.p99Ms), unit: 'ms' });
      rows.push({
        metric: `${name} API CPU per call`,
        value: figure(name, (p) => p.cpuMsPerCall),
        unit: 'ms',
      });
    }
    for (const op of ['create', 'get']) {
      const ratio = round(
        figure(`mcp ${op}`, (p) => p.cpuMsPerCall) / figure(`http ${op}`, (p) => p.cpuMsPerCall),
      );
      rows.push({
        metric: `mcp/http CPU per call, ${op}`,
        value: ratio,
        unit: '×',
        target: '≤ 1.5×',
        met: ratio <= 1.5,
      });
    }
    return { status: 'ok', settings, rows, runs };
  },
};

async function measure(
  url: string,
  key: string,
  pid: number,
  settings: { ratePerSecond: number; seconds: number; warmupCalls: number },
  log: (message: string) => void,
): Promise<Phase[]> {
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const created: { http: string[]; mcp: string[] } = { http: [], mcp: [] };
  const httpCreate: Send = async (i) => {
    const res = await fetch(`${url}/v1/threads/bench/tasks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ toolset: 'bench', arguments: { n: i } }),
    });
    const body = (await res.json()) as { task_id?: string };
    if (body.task_id) created.http.push(body.task_id);
    return res.status === 201;
  };
  const mcpCreate: Send = async (i) => {
    const res = await fetch(`${url}/mcp?thread=bench`, {
      method: 'POST',
      headers: { ...auth, accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: 'bench', arguments: { n: i }, task: {} },
      }),
    });
    const body = (await res.json()) as { result?: { task?: { taskId: string } } };
    if (body.result?.task) created.mcp.push(body.result.task.taskId);
    return res.status === 200 && body.result?.task !== undefined;
  };
  const httpGet: Send = async (i) => {
    const id = created.http[i % created.http.length];
    const res = await fetch(`${url}/v1/threads/bench/tasks/${id}`, { headers: auth });
    await res.arrayBuffer();
    return res.status === 200;
  };
  const mcpGet: Send = async (i) => {
    const id = created.mcp[i % created.mcp.length];
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { ...auth, accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tasks/get', params: { taskId: id } }),
    });
    const body = (await res.json()) as { result?: { taskId?: string } };
    return body.result?.taskId === id;
  };
  // Warm both faces (JIT, pools) before anything is measured.
  for (let i = 0; i < settings.warmupCalls; i++) {
    await httpCreate(i);
    await mcpCreate(i);
  }
  const phases: Phase[] = [];
  for (const [name, send] of [
    ['http create', httpCreate],
    ['mcp create', mcpCreate],
    ['http get', httpGet],
    ['mcp get', mcpGet],
  ] as const) {
    const phase = await openLoop(name, send, pid, settings);
    log(
      `${name}: p50 ${round(phase.p50Ms)} ms, p99 ${round(phase.p99Ms)} ms, ` +
        `CPU ${round(phase.cpuMsPerCall)} ms/call, ${phase.errors} errors`,
    );
    phases.push(phase);
  }
  return phases;
}

/** Sends at a fixed rate for the set time, then waits for the stragglers. */
async function openLoop(
  name: string,
  send: Send,
  pid: number,
  settings: { ratePerSecond: number; seconds: number },
): Promise<Phase> {
  const total = settings.ratePerSecond * settings.seconds;
  const gapMs = 1000 / settings.ratePerSecond;
  const latencies: number[] = [];
  let errors = 0;
  const cpuBefore = cpuMs(pid);
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + i * gapMs;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const sent = performance.now();
    inFlight.push(
      send(100_000 + i).then(
        (ok) => {
          latencies.push(performance.now() - sent);
          if (!ok) errors++;
        },
        () => {
          errors++;
        },
      ),
    );
  }
  await Promise.all(inFlight);
  const cpu = cpuMs(pid) - cpuBefore;
  return {
    name,
    calls: total,
    errors,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    cpuMsPerCall: cpu / total,
  };
}

/** The process's user + system CPU time so far, in ms (Linux /proc). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}
