import { BenchDatabase } from './bench-db';
import {
  PollerEnv,
  RunningDemo,
  RunningPoller,
  startDemoServer,
  startPoller,
  writeToolsetFile,
} from './poller-harness';
import { sleep } from './stats';

export interface Fleet {
  demo: RunningDemo;
  pollers: RunningPoller[];
  stop(): Promise<void>;
}

/** The demo server over HTTP and `count` pollers on `bench`'s database; stop() ends them all. */
export async function startFleet(
  bench: BenchDatabase,
  count: number,
  settings: Omit<PollerEnv, 'databaseUrl' | 'demoUrl' | 'toolsetFile'> & {
    maxConcurrentCalls: number;
    /** The demo server answers JSON instead of SSE (`--json-response`). */
    demoJsonResponse?: boolean;
  },
): Promise<Fleet> {
  const demo = await startDemoServer(settings.demoJsonResponse);
  const pollers: RunningPoller[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(pollers.map((poller) => poller.stop()));
    await demo.stop();
  };
  try {
    // The poller refuses connect + call timeouts that are not below the lease (leases.md).
    const toolsetFile = writeToolsetFile(
      settings.maxConcurrentCalls,
      Math.min(4_000, settings.leaseMs / 2),
    );
    for (let i = 0; i < count; i++) {
      pollers.push(
        await startPoller({ ...settings, databaseUrl: bench.url, demoUrl: demo.url, toolsetFile }),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { demo, pollers, stop };
}

/**
 * BENCH_DEMO_JSON=1: the fleet benchmarks' demo server answers JSON (`--json-response`) instead
 * of SSE streams, so the poller's figures leave out the SSE parse per call.
 */
export function demoAnswersJson(): boolean {
  return process.env.BENCH_DEMO_JSON === '1';
}

/** How the fleet's demo server answers, for a benchmark's settings. */
export function demoAnswers(): string {
  return demoAnswersJson() ? 'json (--json-response, BENCH_DEMO_JSON=1)' : 'sse (the SDK default)';
}

/** Waits until no row is `queued` (every submit went out), or throws after `timeoutMs`. */
export async function waitAllSubmitted(bench: BenchDatabase, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await bench.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM tasks WHERE status = 'queued'`,
    );
    if (Number(rows[0].n) === 0) return;
    if (Date.now() > deadline)
      throw new Error(`${rows[0].n} tasks still queued after ${timeoutMs} ms`);
    await sleep(250);
  }
}
