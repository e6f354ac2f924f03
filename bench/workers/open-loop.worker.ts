/**
 * An open-loop HTTP load generator in its own process, so its CPU never counts against the
 * process under test and its event loop never delays that process's answers. The parent sends
 * one `OpenLoopPlan` per phase; requests leave on a fixed schedule (request i at start + i/rate)
 * whether or not earlier ones answered, and each latency is measured from the scheduled instant,
 * not from when the request left: a generator that fell behind would otherwise hide the queueing
 * it caused (coordinated omission).
 */
import { Agent, request } from 'node:http';
import { OpenLoopPlan, OpenLoopReport, OpenLoopRequest } from '../lib/open-loop';

/** Keep-alive sockets: a fresh TCP connection per request would measure the kernel, not the API. */
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function sendOne(target: URL, spec: OpenLoopRequest, i: number): Promise<number> {
  const body = spec.body?.replaceAll('{i}', String(i));
  const extra = spec.perRequestHeaders?.[i % spec.perRequestHeaders.length];
  const headers: Record<string, string | number> = { ...spec.headers, ...extra };
  if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
  return new Promise((resolve, reject) => {
    const req = request(target, { agent, method: spec.method, headers }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function runPhase(plan: OpenLoopPlan): Promise<OpenLoopReport> {
  const target = new URL(plan.request.url);
  const total = Math.round(plan.ratePerSecond * plan.seconds);
  const gapMs = 1000 / plan.ratePerSecond;
  const latencies = new Float64Array(total);
  const statuses: Record<string, number> = {};
  let done = 0;
  let lateStarts = 0;
  const start = performance.now() + 20;
  const finished = new Promise<void>((resolve) => {
    const count = (i: number, status: string, scheduled: number): void => {
      latencies[i] = performance.now() - scheduled;
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (++done === total) resolve();
    };
    let next = 0;
    const tick = (): void => {
      const now = performance.now();
      // Everything due by now leaves now; a late timer sends a small burst, as a real fleet would.
      while (next < total && start + next * gapMs <= now) {
        const i = next++;
        const scheduled = start + i * gapMs;
        if (now - scheduled > 5) lateStarts++;
        sendOne(target, plan.request, plan.firstIndex + i).then(
          (status) => count(i, String(status), scheduled),
          () => count(i, 'error', scheduled),
        );
      }
      if (next < total) setTimeout(tick, Math.max(0, start + next * gapMs - performance.now()));
    };
    setTimeout(tick, Math.max(0, start - performance.now()));
    if (total === 0) resolve();
  });
  await finished;
  return {
    sent: total,
    seconds: (performance.now() - start) / 1000,
    statuses,
    lateStarts,
    latenciesMs: Array.from(latencies),
  };
}

process.on('message', (plan: OpenLoopPlan) => {
  runPhase(plan).then(
    (report) => process.send?.({ type: 'report', report }),
    (error: unknown) => process.send?.({ type: 'failed', message: String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready' });
