/**
 * The upstream HTTP client (libs/upstream/src/transport/http.fetch.ts) against Node's `fetch`:
 * one MCP client process calls the demo server's `demo_echo` over Streamable HTTP (an SSE answer
 * per call, as the poller's status calls get), 4 calls in flight, through the fetch the poller
 * builds around each base, and counts its own CPU per call. The two kinds run alternately, the
 * order turned each round, against one demo server, so drift hits both alike. The client's CPU
 * is what changes: the server's work is the same for both.
 */
import { startDemoServer } from './lib/poller-harness';
import { runWorkers } from './lib/spawn';
import { median, round } from './lib/stats';
import { Benchmark, ResultRow } from './lib/types';

const KINDS = ['node', 'gateway'] as const;
type Kind = (typeof KINDS)[number];
const LABEL: Record<Kind, string> = {
  node: "Node's fetch",
  gateway: "the gateway's HTTP client",
};

interface Run {
  kind: Kind;
  round: number;
  cpuUsPerCall: number;
  callsPerSecond: number;
}

export const upstreamFetchBench: Benchmark = {
  name: 'upstream-fetch',
  title: "The upstream HTTP client against Node's fetch: client CPU per MCP tool call",
  async run(ctx) {
    const calls = ctx.quick ? 2_000 : 5_000;
    const concurrency = 4;
    const demo = await startDemoServer();
    const runs: Run[] = [];
    try {
      for (let turn = 0; turn < ctx.runs; turn++) {
        const order = turn % 2 === 0 ? KINDS : [...KINDS].reverse();
        for (const kind of order) {
          const [done] = await runWorkers('workers/mcp-call.worker.js', 1, {
            DEMO_SERVER_URL: demo.url,
            CLIENT_FETCH: kind,
            CALLS: String(calls),
            CONCURRENCY: String(concurrency),
          });
          const run: Run = {
            kind,
            round: turn + 1,
            cpuUsPerCall: (done.cpuMicros ?? 0) / calls,
            callsPerSecond: calls / Math.max(0.001, (done.endedAt - done.startedAt) / 1000),
          };
          runs.push(run);
          ctx.log(
            `round ${run.round} ${LABEL[kind]}: ${round(run.cpuUsPerCall)} µs CPU/call, ${Math.round(run.callsPerSecond)} calls/s`,
          );
        }
      }
    } finally {
      await demo.stop();
    }
    const of = (kind: Kind): Run[] => runs.filter((run) => run.kind === kind);
    const ratios = of('gateway').map(
      (run) => run.cpuUsPerCall / of('node').find((n) => n.round === run.round)!.cpuUsPerCall,
    );
    const rows: ResultRow[] = KINDS.flatMap((kind) => [
      {
        metric: `client CPU per tools/call, ${LABEL[kind]}`,
        value: round(median(of(kind).map((run) => run.cpuUsPerCall))),
        unit: 'µs',
      },
      {
        metric: `tools/call per second (${concurrency} in flight), ${LABEL[kind]}`,
        value: Math.round(median(of(kind).map((run) => run.callsPerSecond))),
        unit: 'calls/s',
      },
    ]);
    rows.push({
      metric: "client CPU per call: the gateway's HTTP client / Node's fetch (same round)",
      value: round(median(ratios)),
      unit: '×',
    });
    return {
      status: 'ok',
      settings: {
        calls,
        concurrency,
        warmUpCalls: 300,
        tool: 'demo_echo over Streamable HTTP, an SSE answer per call',
        fetch: 'upstreamFetch(server, undefined, base), as the poller builds it',
      },
      rows,
      runs,
    };
  },
};
