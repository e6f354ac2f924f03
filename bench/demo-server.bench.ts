/**
 * The demo server alone, so the gateway's benchmarks know their upstream is not the bound: a
 * 2025-11-25 Streamable HTTP session (as the pollers open one), then Debian's `wrk` in its own
 * process sends `tools/call demo_status` (an ordinary tool that answers at once) and
 * `demo_submit {duration_ms: 0}` on keep-alive connections for a fixed time. Reports calls/s,
 * wrk's latency percentiles and the demo server's CPU per call (utime + stime from /proc).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pollerMissing } from './lib/poller-gate';
import { cpuSeconds, RunningDemo, startDemoServer } from './lib/poller-harness';
import { median, round } from './lib/stats';
import { Benchmark, ResultRow } from './lib/types';

const run = promisify(execFile);
const PROTOCOL = '2025-11-25';

interface Phase {
  tool: string;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerCall: number;
  errors: number;
}

export const demoServerBench: Benchmark = {
  name: 'demo-server',
  title: 'The demo server alone: ordinary tool calls over Streamable HTTP (wrk)',
  async run(ctx) {
    const settings = {
      seconds: ctx.quick ? 5 : 15,
      connections: 16,
      threads: 1,
      runs: ctx.quick ? 1 : ctx.runs,
      session: `one ${PROTOCOL} session per server: SSE answers (the SDK's default), then JSON (--json-response)`,
    };
    const missing = pollerMissing() ?? (await wrkMissing());
    if (missing) return { status: 'skipped', reason: missing, settings, rows: [], runs: [] };
    const runs: Phase[][] = [];
    for (let r = 0; r < settings.runs; r++) {
      const phases: Phase[] = [];
      // SSE streams (the SDK's default answer) and plain JSON answers (`--json-response`).
      for (const json of [false, true]) {
        const demo = await startDemoServer(json);
        try {
          const session = await openSession(demo.url);
          const job = await callTool(demo.url, session, 'demo_submit', { duration_ms: 0 });
          // 2 s unmeasured first: a cold server (JIT, buffers) is not what the gateway meets.
          await wrkPhase(demo, session, 'warm-up', { task_id: job }, 'demo_status', {
            ...settings,
            seconds: 2,
          });
          for (const [tool, args] of [
            ['demo_status', { task_id: job }],
            ['demo_submit', { duration_ms: 0 }],
          ] as const) {
            const label = `${tool} (${json ? 'json' : 'sse'})`;
            const phase = await wrkPhase(demo, session, label, args, tool, settings);
            ctx.log(JSON.stringify(phase));
            phases.push(phase);
          }
        } finally {
          await demo.stop();
        }
      }
      runs.push(phases);
    }
    const rows: ResultRow[] = [];
    for (const tool of runs[0].map((phase) => phase.tool)) {
      const pick = (f: (p: Phase) => number): number =>
        round(median(runs.map((phases) => f(phases.find((p) => p.tool === tool)!))));
      rows.push({
        metric: `${tool}: calls/s (${settings.connections} connections)`,
        value: pick((p) => p.callsPerSecond),
        unit: 'calls/s',
        target: '≥ 2,000/s (several times the gateway benchmarks’ rates)',
        met: pick((p) => p.callsPerSecond) >= 2_000,
      });
      rows.push({ metric: `${tool}: latency p99`, value: pick((p) => p.p99Ms), unit: 'ms' });
      rows.push({
        metric: `${tool}: non-2xx answers`,
        value: pick((p) => p.errors),
        unit: 'calls',
      });
      rows.push({
        metric: `${tool}: demo server CPU per call`,
        value: pick((p) => p.cpuMsPerCall),
        unit: 'ms CPU/call',
      });
    }
    return { status: 'ok', settings, rows, runs };
  },
};

async function wrkMissing(): Promise<string | undefined> {
  try {
    await run('wrk', ['--version']).catch((error: { stdout?: string }) => {
      // wrk --version prints its banner and exits 1.
      if (!error.stdout?.includes('wrk')) throw error;
    });
    return undefined;
  } catch {
    return 'wrk is not installed (Debian: apt-get install -y wrk)';
  }
}

const headers = (session?: string): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': PROTOCOL,
  ...(session ? { 'mcp-session-id': session } : {}),
});

/** initialize + notifications/initialized; returns the session ID. */
async function openSession(url: string): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL,
        capabilities: {},
        clientInfo: { name: 'bench', version: '1' },
      },
    }),
  });
  await res.text();
  const session = res.headers.get('mcp-session-id');
  if (!res.ok || !session) throw new Error(`initialize answered ${res.status}`);
  const note = await fetch(url, {
    method: 'POST',
    headers: headers(session),
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await note.text();
  return session;
}

/** One tools/call; returns structuredContent.task_id (demo_submit's job). */
async function callTool(
  url: string,
  session: string,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: headers(session),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name, arguments: args },
    }),
  });
  const text = await res.text();
  const match = /"task_id":"([^"]+)"/.exec(text);
  if (!match) throw new Error(`${name} answered without a task_id: ${text.slice(0, 200)}`);
  return match[1];
}

async function wrkPhase(
  demo: RunningDemo,
  session: string,
  label: string,
  args: Record<string, unknown>,
  tool: string,
  settings: { seconds: number; connections: number; threads: number },
): Promise<Phase> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  const script = join(dir, 'call.lua');
  // A JSON-RPC ID of its own per request, as a real client sends: the SDK's transport keys its
  // answer streams by request ID, so concurrent requests that share one wait on each other.
  const head = '{"jsonrpc":"2.0","id":';
  const tail = `,"method":"tools/call","params":${JSON.stringify({ name: tool, arguments: args })}}`;
  const lua = [
    'wrk.method = "POST"',
    ...Object.entries(headers(session)).map(
      ([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`,
    ),
    'local n = 0',
    'request = function()',
    '  n = n + 1',
    `  return wrk.format(nil, nil, nil, ${JSON.stringify(head)} .. n .. ${JSON.stringify(tail)})`,
    'end',
  ].join('\n');
  writeFileSync(script, `${lua}\n`);
  const before = cpuSeconds(demo.pid);
  const { stdout } = await run('wrk', [
    `-t${settings.threads}`,
    `-c${settings.connections}`,
    `-d${settings.seconds}s`,
    '--latency',
    '-s',
    script,
    demo.url,
  ]);
  const cpu = cpuSeconds(demo.pid) - before;
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? Number.NaN);
  const perSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? Number.NaN);
  const errors = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  return {
    tool: label,
    callsPerSecond: perSecond,
    p50Ms: wrkPercentile(stdout, '50%'),
    p99Ms: wrkPercentile(stdout, '99%'),
    cpuMsPerCall: (cpu * 1000) / requests,
    errors,
  };
}

/** A latency percentile from wrk's `--latency` table (units us, ms or s), in ms. */
function wrkPercentile(stdout: string, label: string): number {
  const match = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(stdout);
  if (!match) return Number.NaN;
  const scale = match[2] === 'us' ? 0.001 : match[2] === 's' ? 1000 : 1;
  return Number(match[1]) * scale;
}
