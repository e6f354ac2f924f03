// One test file's processes. Every helper that starts a process which outlives the call (a demo
// server, a poller, an API, a CLI, a Postgres) registers it with the file's scope, which the
// file's fixture opened at its top level. The scope stops them all after the file's last afterAll
// hook (or after each test), even when one stop fails. Under jest, starting one with no scope open
// throws: a process outside a fixture cannot be written (docs/testing.md, "Processes go through a
// fixture").
import {
  spawn as spawnChild,
  type ChildProcess,
  type SpawnOptions,
  type SpawnOptionsWithoutStdio,
} from 'node:child_process';
import { NodeProcess, startNode } from './node-process';

/**
 * Set on each integration test file's global by the leak-guard environment: there a process may
 * only start in a scope. Outside jest (the chaos runner, the benchmarks, compiled into dist/) the
 * helpers start processes as before and their callers stop them.
 */
export const SCOPE_REQUIRED = '__mtgProcessScopeRequired';
/**
 * Where a file's open scope is on its global: the leak-guard environment stops it after the
 * file's last afterAll hook, so each fixture's own afterAll still finds its processes running.
 */
export const OPEN_SCOPE = '__mtgProcessScope';

/** Where the rule is written, for the error that enforces it. */
const RULE = 'docs/testing.md, "Processes go through a fixture"';

/** Something a scope stops: a process, or a server made of processes. */
interface Stoppable {
  readonly what: string;
  stop(): Promise<unknown>;
  /** Stopped after the rest (a Postgres the other processes use). */
  readonly last?: boolean;
}

/** Resolves true once the child exited, false after `ms`. */
export function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; a stopped (SIGSTOP) child is continued first. */
export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  // No pid: it never started (the 'error' event said why).
  if (child.pid === undefined || (await waitForExit(child, 0))) return;
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  if (!(await waitForExit(child, graceMs))) {
    child.kill('SIGKILL');
    await waitForExit(child, 5000);
  }
}

/** How much of a process's latest output (stdout and stderr together) a scope keeps. */
const TAIL_BYTES = 12_000;

/** The latest output of one process, kept for the report of a failed test. */
class OutputTail {
  private chunks: string[] = [];
  private bytes = 0;
  readonly startedAt = Date.now();

  constructor(
    readonly what: string,
    private readonly child: ChildProcess,
  ) {
    const keep = (chunk: Buffer): void => {
      const text = chunk.toString();
      this.chunks.push(text);
      this.bytes += text.length;
      while (this.bytes > TAIL_BYTES && this.chunks.length > 1) {
        this.bytes -= this.chunks.shift()!.length;
      }
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  /** Whether it ran at `since` or later: started then, or still running. */
  ranSince(since: number): boolean {
    return (
      this.startedAt >= since || (this.child.exitCode === null && this.child.signalCode === null)
    );
  }

  /** Its heading (what, how it ended) and its latest lines, the first cut one left out. */
  report(): string {
    const { exitCode, signalCode } = this.child;
    const ended =
      exitCode !== null
        ? `exited ${exitCode}`
        : signalCode !== null
          ? `ended by ${signalCode}`
          : 'running';
    let text = this.chunks.join('');
    if (this.bytes > TAIL_BYTES) text = text.slice(text.indexOf('\n') + 1);
    return `--- ${this.what}, ${ended} ---\n${text.trimEnd() || '(no output)'}`;
  }
}

/** A test file's processes; see the file header. */
export class ProcessScope {
  private readonly file = new Set<Stoppable>();
  /** The output of the processes started with `tail`, for {@link ProcessScope.outputSince}. */
  private readonly tails: OutputTail[] = [];
  /** What the running test started, with `perTest`; undefined outside a test. */
  private test: Set<Stoppable> | undefined;
  private perTest = false;

  /** @internal What each test starts stops after it (what beforeAll starts, after the file). */
  stopAfterEachTest(): void {
    if (this.perTest) return;
    this.perTest = true;
    beforeEach(() => {
      this.test = new Set();
    });
    afterEach(async () => {
      const started = this.test;
      this.test = undefined;
      if (started) await stopEach(started);
    });
  }

  /** Adds a stoppable; it is stopped after the test (perTest) or the file. */
  add(entry: Stoppable): void {
    (this.test ?? this.file).add(entry);
  }

  /**
   * Adds a child process: SIGTERM, SIGKILL after `graceMs` (default 5 s). Returns it. `tail`:
   * its latest output is kept for the report of a failed test (only for a child whose streams
   * its starter reads at once: a listener here starts them flowing).
   */
  child<T extends ChildProcess>(
    child: T,
    what: string,
    options: { graceMs?: number; last?: boolean; tail?: boolean } = {},
  ): T {
    this.add({
      what: `${what} (pid ${child.pid})`,
      stop: () => stopChild(child, options.graceMs),
      last: options.last,
    });
    if (options.tail) this.tails.push(new OutputTail(`${what} (pid ${child.pid})`, child));
    return child;
  }

  /**
   * The latest output of each process started with `tail` that ran at `since` or later, for the
   * report of a test that failed (docs/testing.md, "A failed test's processes"); '' when none.
   */
  outputSince(since: number): string {
    return this.tails
      .filter((tail) => tail.ranSince(since))
      .map((tail) => tail.report())
      .join('\n');
  }

  /** Stops everything added so far, the `last` ones after the rest. */
  async stopAll(): Promise<void> {
    const all = new Set([...(this.test ?? []), ...this.file]);
    this.test?.clear();
    this.file.clear();
    await stopEach(all);
  }
}

/** Stops each (the `last` ones after the rest), every one even when some fail; then throws. */
async function stopEach(entries: Set<Stoppable>): Promise<void> {
  const failed: string[] = [];
  for (const group of [false, true]) {
    const stopping = [...entries].filter((entry) => (entry.last ?? false) === group);
    const results = await Promise.allSettled(stopping.map((entry) => entry.stop()));
    results.forEach((result, i) => {
      if (result.status === 'rejected')
        failed.push(`${stopping[i].what}: ${String(result.reason)}`);
    });
  }
  if (failed.length > 0) throw new Error(`could not stop:\n  ${failed.join('\n  ')}`);
}

let fileScope: ProcessScope | undefined;

/**
 * Opens this file's scope (once; jest loads this module afresh for every test file) and returns
 * it. Called by the fixtures (useFleet, useFixture, useOwnPostgres, useProcesses) at the file's
 * top level, where jest takes hooks. A file has one scope: `perTest` from any of them applies to
 * all that the file's tests start.
 */
export function openProcessScope(options: { perTest?: boolean } = {}): ProcessScope {
  if (!fileScope) {
    fileScope = new ProcessScope();
    (globalThis as Record<string, unknown>)[OPEN_SCOPE] = fileScope;
  }
  if (options.perTest) fileScope.stopAfterEachTest();
  return fileScope;
}

/**
 * The scope a helper that starts `what` registers it with. Call it before starting anything:
 * under jest with no scope open it throws, naming the rule; outside jest it is undefined.
 */
export function processScope(what: string): ProcessScope | undefined {
  if (fileScope) return fileScope;
  if ((globalThis as Record<string, unknown>)[SCOPE_REQUIRED] !== true) return undefined;
  throw new Error(
    `${what} started outside a fixture: a test file starts processes only through one, declared ` +
      'at its top level (useFleet() in test/helpers/fleet.ts, useProcesses() in ' +
      'test/helpers/process-scope.ts, useFixture() or useApi()), which stops them after it ' +
      `(${RULE})`,
  );
}

/** How a process run to its end ended, and what it printed. */
export interface ProcessRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A file's processes that are not a fleet's: spawned or tracked here, stopped after it. */
export interface Processes {
  /** child_process.spawn, stopped (SIGTERM, SIGKILL after 5 s) with the file's processes. */
  spawn(
    command: string,
    args?: readonly string[],
    options?: SpawnOptionsWithoutStdio,
  ): ChildProcess;
  spawn(command: string, args: readonly string[], options: SpawnOptions): ChildProcess;
  /**
   * Runs `command` to its end and resolves with its output (rejects only if it cannot start);
   * SIGKILLed after `timeoutMs` (default 60 s). In the scope while it runs, as a test that
   * times out may leave it running.
   */
  run(
    command: string,
    args: readonly string[],
    options?: { env?: NodeJS.ProcessEnv; timeoutMs?: number },
  ): Promise<ProcessRun>;
  /** A Node script of this build (startNode in node-process.ts). */
  node(script: string, args?: string[], env?: NodeJS.ProcessEnv): NodeProcess;
  /** Adds a process started elsewhere (a grandchild's parent, say); returns it. */
  track<T extends ChildProcess | NodeProcess>(process: T, graceMs?: number): T;
  /** Stops every process of the file so far (what the scope does after the file). */
  stopAll(): Promise<void>;
}

/**
 * Registers a file's process scope for files that need processes but no fleet (useFleet gives the
 * same `track` and `node`). `perTest`: what a test starts stops after it.
 */
export function useProcesses(options: { perTest?: boolean } = {}): Processes {
  const scope = openProcessScope(options);
  return {
    spawn(command: string, args: readonly string[] = [], spawnOptions: SpawnOptions = {}) {
      return scope.child(spawnChild(command, args, spawnOptions), command);
    },
    run(command, args, runOptions = {}) {
      const child = scope.child(
        spawnChild(command, args, { env: runOptions.env, stdio: ['ignore', 'pipe', 'pipe'] }),
        command,
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), runOptions.timeoutMs ?? 60_000);
      return new Promise((resolve, reject) => {
        child.once('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
        child.once('close', (code, signal) => {
          clearTimeout(timer);
          resolve({ code, signal, stdout, stderr });
        });
      });
    },
    node: (script, args, env) => startNode(script, args, env),
    track(process, graceMs) {
      const child: ChildProcess = 'lines' in process ? process.child : process;
      scope.child(child, 'a tracked process', { graceMs });
      return process;
    },
    stopAll: () => scope.stopAll(),
  };
}
