import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { quantile } from './stats';

/** One request shape; `{i}` in the body is replaced by the request's index (unique bodies). */
export interface OpenLoopRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** Request i adds `perRequestHeaders[i % length]` (e.g. one API key per simulated client). */
  perRequestHeaders?: Record<string, string>[];
  body?: string;
}

export interface OpenLoopPlan {
  request: OpenLoopRequest;
  ratePerSecond: number;
  seconds: number;
  /** Added to each request's index, so phases never repeat a body. */
  firstIndex: number;
}

export interface OpenLoopReport {
  sent: number;
  /** From the first scheduled send to the last answer. */
  seconds: number;
  /** Answers by HTTP status ("error" for a failed connection). */
  statuses: Record<string, number>;
  /** Requests that left more than 5 ms after their slot (the generator itself was late). */
  lateStarts: number;
  latenciesMs: number[];
}

export interface PhaseFigures {
  rate: number;
  sent: number;
  ok: number;
  p50Ms: number;
  p99Ms: number;
  lateStarts: number;
}

/** The figures of one phase: `okStatus` answers count as successes. */
export function summarizePhase(
  plan: OpenLoopPlan,
  report: OpenLoopReport,
  okStatus: number,
): PhaseFigures {
  return {
    rate: plan.ratePerSecond,
    sent: report.sent,
    ok: report.statuses[String(okStatus)] ?? 0,
    p50Ms: quantile(report.latenciesMs, 0.5),
    p99Ms: quantile(report.latenciesMs, 0.99),
    lateStarts: report.lateStarts,
  };
}

type Reply =
  | { type: 'ready' }
  | { type: 'report'; report: OpenLoopReport }
  | { type: 'failed'; message: string };

/**
 * The generator process (dist/bench/workers/open-loop.worker.js): one phase at a time, over IPC.
 * Its own CPU is never read: only the processes under test are.
 */
export class OpenLoopGenerator {
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<OpenLoopGenerator> {
    const child = fork(join(__dirname, '..', 'workers', 'open-loop.worker.js'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('message', (message: Reply) =>
        message.type === 'ready' ? resolve() : reject(new Error('generator did not start')),
      );
      child.once('exit', (code) => reject(new Error(`generator exited (${code})`)));
    });
    return new OpenLoopGenerator(child);
  }

  run(plan: OpenLoopPlan): Promise<OpenLoopReport> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null): void =>
        reject(new Error(`generator exited (${code}) during a phase`));
      this.child.once('exit', onExit);
      this.child.once('message', (message: Reply) => {
        this.child.off('exit', onExit);
        if (message.type === 'report') resolve(message.report);
        else
          reject(new Error(`generator: ${message.type === 'failed' ? message.message : 'ready?'}`));
      });
      this.child.send(plan);
    });
  }

  stop(): void {
    if (this.child.exitCode === null) this.child.disconnect();
  }
}
