import { ChildProcess, fork } from 'node:child_process';
import { join, resolve } from 'node:path';
import { WorkerMessage } from './ipc';

/** dist/bench, where the compiled worker scripts live (this file is dist/bench/lib/spawn.js). */
export const BENCH_DIST = join(__dirname, '..');

export type DoneMessage = Extract<WorkerMessage, { type: 'done' }>;

export interface WorkerProcess {
  child: ChildProcess;
  ready: Promise<void>;
  done: Promise<DoneMessage>;
  go(): void;
  stop(): void;
}

/**
 * Forks `dist/bench/<script>` (or `script` itself when it is an absolute path: another build's
 * worker) with an IPC channel. With BENCH_CPU_PROF=<dir> the worker runs under `node --cpu-prof`
 * so a slow configuration can be profiled without code changes.
 */
export function spawnWorker(script: string, env: NodeJS.ProcessEnv): WorkerProcess {
  const profileDir = process.env.BENCH_CPU_PROF;
  const child = fork(resolve(BENCH_DIST, script), [], {
    env: { ...process.env, ...env },
    execArgv: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') resolve();
      if (message.type === 'error') reject(new Error(`${script}: ${message.message}`));
    });
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before ready`)));
  });
  const done = new Promise<DoneMessage>((resolve, reject) => {
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'done') resolve(message);
      if (message.type === 'error') reject(new Error(`${script}: ${message.message}`));
    });
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`${script} exited with code ${code}`));
    });
  });
  // Both are awaited later; a rejection before that must not crash the runner as unhandled.
  ready.catch(() => undefined);
  done.catch(() => undefined);
  return {
    child,
    ready,
    done,
    go: () => child.send({ type: 'go' }),
    stop: () => child.send({ type: 'stop' }),
  };
}

/**
 * Starts `count` workers, waits until all are ready, starts them together, awaits them all. With
 * `stopWhen`, the workers run until it resolves (or one of them ends or fails), then each is told
 * to stop.
 */
export async function runWorkers(
  script: string,
  count: number,
  env: NodeJS.ProcessEnv,
  stopWhen?: () => Promise<void>,
): Promise<DoneMessage[]> {
  const workers = Array.from({ length: count }, () => spawnWorker(script, env));
  try {
    await Promise.all(workers.map((worker) => worker.ready));
    for (const worker of workers) worker.go();
    const allDone = Promise.all(workers.map((worker) => worker.done));
    // Awaited below unless `stopWhen` fails first: then the workers are killed, and their end
    // must not surface as an unhandled rejection.
    allDone.catch(() => undefined);
    if (stopWhen) {
      await Promise.race([stopWhen(), allDone]);
      for (const worker of workers) if (worker.child.connected) worker.stop();
    }
    const results = await allDone;
    // A worker exits by itself after reporting (a CPU profile is written at exit).
    await Promise.all(workers.map((worker) => exited(worker.child, 15_000)));
    return results;
  } finally {
    for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
  }
}

/** Resolves when `child` has exited, or after `timeoutMs` (the caller then kills it). */
export function exited(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
