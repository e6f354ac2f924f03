import { ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface Child {
  name: string;
  process: ChildProcess;
  exited: Promise<number | null>;
}

/**
 * Starts a Node app of this build; its output lines are prefixed with its name. The child leads
 * its own process group: a Ctrl-C in the terminal signals the terminal's foreground group, and
 * a child in it would get that SIGINT *and* the launcher's SIGTERM, which the poller reads as a
 * second signal ("exit now, no drain"). Outside the group, each child gets exactly the signals
 * the launcher sends it.
 */
export function startChild(
  name: string,
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Child {
  const child = spawn(process.execPath, [script, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
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

/** True once the child has exited. */
export function hasExited(child: Child): boolean {
  return child.process.exitCode !== null || child.process.signalCode !== null;
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(child: Child, graceMs: number): Promise<void> {
  if (hasExited(child)) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

/** The launcher's side of its guardian (guardian.ts): what to stop if the launcher dies. */
export interface Guardian {
  watchChild(child: Child): void;
  watchPostgres(dataDir: string): void;
}

/**
 * Starts the guardian in a session of its own (a terminal's signals are not for it) with a pipe
 * from this process on its stdin: the pipe closes when this process ends, by whatever means,
 * which is the guardian's cue. Neither the guardian nor its pipe keeps this process alive.
 */
export function startGuardian(script: string): Guardian {
  const guardian = spawn(process.execPath, [script], {
    stdio: ['pipe', 'inherit', 'inherit'],
    detached: true,
  });
  guardian.unref();
  const pipe = guardian.stdin;
  (pipe as unknown as { unref?: () => void }).unref?.();
  // A guardian that failed to start must not take the launcher down with an EPIPE.
  pipe.on('error', () => undefined);
  const tell = (message: object) => pipe.write(`${JSON.stringify(message)}\n`);
  return {
    watchChild: (child) => child.process.pid !== undefined && tell({ child: child.process.pid }),
    watchPostgres: (dataDir) => tell({ postgres: dataDir }),
  };
}
