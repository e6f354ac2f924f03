import { spawnSync } from 'node:child_process';

/** Result of running an external command to completion. */
export interface ToolRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Whether an operator tool (promtool, kubectl; or Node 24, by its path) can run. Under CI=true a
 * missing tool is an error, so CI can never go green by skipping the check; on a bare developer
 * machine the calling test is skipped instead (the README names the package to install).
 */
export function toolAvailable(command: string, versionArgs: string[]): boolean {
  const found = spawnSync(command, versionArgs, { encoding: 'utf8' });
  if (found.error === undefined && found.status === 0) return true;
  if (process.env.CI === 'true') {
    throw new Error(`${command} is required under CI=true but is not installed (see .ci/run)`);
  }
  return false;
}

/** Runs `command args` in `cwd` and collects its output. */
export function runTool(command: string, args: string[], cwd: string): ToolRun {
  const run = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000 });
  return { status: run.status, stdout: run.stdout ?? '', stderr: run.stderr ?? '' };
}
