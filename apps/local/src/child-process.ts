import { ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface Child {
  name: string;
  process: ChildProcess;
  exited: Promise<number | null>;
}

/** Starts a Node app of this build; its output lines are prefixed with its name. */
export function startChild(
  name: string,
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Child {
  const child = spawn(process.execPath, [script, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) =>
      process.stdout.write(`[${name}] ${line}\n`),
    );
  }
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return { name, process: child, exited };
}

/** Resolves with the first stdout line matching `pattern`, or rejects if the child exits first. */
export function waitForLine(
  child: Child,
  pattern: RegExp,
  timeoutMs: number,
): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${child.name} did not start within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const lines = createInterface({ input: child.process.stdout! });
    lines.on('line', (line) => {
      const match = pattern.exec(line);
      if (match) {
        clearTimeout(timer);
        lines.close();
        resolve(match);
      }
    });
    void child.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${child.name} exited with code ${String(code)} before it was ready`));
    });
  });
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(child: Child, graceMs: number): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}
