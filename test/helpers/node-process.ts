import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { processScope } from './process-scope';

// Compiled into dist/test/helpers (chaos runner), this file already sits inside dist.
export const DIST = join(__dirname, '..', '..', __filename.endsWith('.js') ? '' : 'dist');

/** How long `exited` waits after the exit for the output pipes to close. */
const OUTPUT_GRACE_MS = 2000;

/** A Node process of this build, with its output lines collected for assertions. */
export interface NodeProcess {
  child: ChildProcess;
  lines: string[];
  stderr: string[];
  /** Its exit code, once it exited and what it wrote was read (`lines` and `stderr` whole). */
  exited: Promise<number | null>;
  /** Resolves with the first stdout line matching `pattern` (seen before or after the call). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Spawns `dist/<script>` (compiled by `npm run build`) with `args` and extra environment; under
 * jest, in the file's process scope (process-scope.ts), which stops it after the file.
 */
export function startNode(
  script: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): NodeProcess {
  const scope = processScope(`dist/${script} (startNode)`);
  const child = spawn(process.execPath, [join(DIST, script), ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  scope?.child(child, `dist/${script}`, { tail: true });
  const lines: string[] = [];
  const stderr: string[] = [];
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.pattern.test(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  createInterface({ input: child.stderr }).on('line', (line) => stderr.push(line));
  // Once the process exited and its output was read to the end: 'exit' can come before the
  // last lines are read, and a test reading them then would race. 'close' comes after them,
  // unless a grandchild holds the pipes open; then OUTPUT_GRACE_MS after 'exit' will do.
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      const timer = setTimeout(() => resolve(code), OUTPUT_GRACE_MS);
      child.once('close', () => {
        clearTimeout(timer);
        resolve(code);
      });
    }),
  );
  return {
    child,
    lines,
    stderr,
    exited,
    waitForLine(pattern, timeoutMs = 30_000) {
      const seen = lines.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(
            new Error(
              `no line matching ${String(pattern)} within ${timeoutMs} ms; stderr: ${stderr.join('\n')}`,
            ),
          );
        }, timeoutMs);
        waiters.push({ pattern, resolve: (line) => (clearTimeout(timer), resolve(line)) });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(
            new Error(
              `process exited (${String(code)}) before printing ${String(pattern)}; stderr: ${stderr.join('\n')}`,
            ),
          );
        });
      });
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
