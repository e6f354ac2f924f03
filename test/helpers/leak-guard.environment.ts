// The integration tests' jest environment: Node's, plus the leak guard. A test file that leaves a
// child process or an open handle (a socket, a server, a timer, a pipe) behind after its own
// afterAll hooks fails, naming what it left. Left behind, a process keeps running into the next
// file's time and a handle keeps the jest worker from exiting ("A worker process has failed to
// exit gracefully"), with no word of which file did it (docs/testing.md, "The leak guard"). It
// also ends a failed test's report with the latest output of the processes that ran during it
// (docs/testing.md, "A failed test's processes").
import { readdirSync, readFileSync } from 'node:fs';
import type { Circus } from '@jest/types';
import { TestEnvironment } from 'jest-environment-node';
import { OPEN_SCOPE, SCOPE_REQUIRED } from './process-scope';

/** How long what a file stopped may take to be gone (an exit not yet reaped, a socket closing). */
const GRACE_MS = 2000;

/** This process's live child processes: pid and command line, from /proc (Linux). */
export function childProcesses(): Map<number, string> {
  const children = new Map<number, string>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return children; // no /proc (macOS): processes are not checked there
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The fields after the command name, which is in parentheses and may hold spaces.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // A zombie has exited: what remains is its exit status, for Node to collect.
      if (Number(fields[1]) !== process.pid || fields[0] === 'Z') continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      children.set(Number(entry), command);
    } catch {
      // it ended while being read
    }
  }
  return children;
}

/** How many of each kind of resource keeps the event loop alive ('TCPWrap', 'Timeout' ...). */
function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo())
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** What is alive now that was not at `before`: new child processes and extra resources. */
function leftSince(before: {
  children: Map<number, string>;
  resources: Map<string, number>;
}): string[] {
  const left: string[] = [];
  for (const [pid, command] of childProcesses())
    if (!before.children.has(pid)) left.push(`child process ${pid}: ${command}`);
  for (const [kind, count] of activeResources()) {
    const extra = count - (before.resources.get(kind) ?? 0);
    if (extra > 0) left.push(`${extra} × ${kind}`);
  }
  return left;
}

export default class LeakGuardEnvironment extends TestEnvironment {
  private before = { children: new Map<number, string>(), resources: new Map<string, number>() };
  /** When the running test began (its beforeEach hooks included). */
  private testStartedAt = 0;

  override async setup(): Promise<void> {
    await super.setup();
    // Here the helpers start a process only in the file's process scope (process-scope.ts).
    this.global[SCOPE_REQUIRED] = true;
    this.before = { children: childProcesses(), resources: activeResources() };
  }

  async handleTestEvent(event: Circus.Event, state: Circus.State): Promise<void> {
    if (event.name === 'test_start') this.testStartedAt = Date.now();
    if (event.name === 'test_done' && event.test.errors.length > 0) this.reportOutput(event.test);
    // run_finish comes after the file's last afterAll hook; an error added to the state's
    // unhandled errors fails the file, with the message below.
    if (event.name !== 'run_finish') return;
    // The file's process scope stops what its fixtures started (process-scope.ts): here, after
    // the last afterAll hook, so each fixture's own afterAll still found its processes running.
    const scope = this.global[OPEN_SCOPE] as { stopAll(): Promise<void> } | undefined;
    try {
      await scope?.stopAll();
    } catch (error) {
      state.unhandledErrors.push(error);
    }
    let left = leftSince(this.before);
    const until = Date.now() + GRACE_MS;
    while (left.length > 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      left = leftSince(this.before);
    }
    if (left.length === 0) return;
    // Killed here, so the next file in this worker does not run beside them.
    for (const pid of childProcesses().keys()) {
      if (this.before.children.has(pid)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    state.unhandledErrors.push(
      new Error(
        `the leak guard: this file left behind, after its afterAll hooks:\n  ${left.join('\n  ')}\n` +
          'stop what the file starts in its own hooks (test/helpers/fleet.ts, docs/testing.md)',
      ),
    );
  }

  /**
   * A failed test's report ends with the latest output of each process that ran during it
   * (docs/testing.md, "A failed test's processes"): test_done comes after its afterEach hooks,
   * so what they stopped has said its last.
   */
  private reportOutput(test: Circus.TestEntry): void {
    const scope = this.global[OPEN_SCOPE] as { outputSince(since: number): string } | undefined;
    const output = scope?.outputSince(this.testStartedAt);
    if (!output) return;
    const report = new Error(`the latest output of the processes this test ran:\n${output}`);
    // The message alone: a stack here would point into jest, not at the test.
    report.stack = report.message;
    test.errors.push(report);
  }
}
