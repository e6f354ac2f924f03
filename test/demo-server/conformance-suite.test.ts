// Guards against the demo server's 2026-07-28 side failing the official conformance suite's tasks-* scenarios.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConformanceSuite, GUARD_MARKER, taskScenarios } from '../helpers/conformance-suite';
import { startDemoServer, type DemoServerProcess } from '../helpers/processes';
import { cleanupAll } from './demo-process.helper';

const SCENARIOS = taskScenarios();
const work = mkdtempSync(join(tmpdir(), 'demo-conformance-'));
const suite = new ConformanceSuite(work);
let demo: DemoServerProcess;
const summary: string[] = [];

beforeAll(async () => {
  demo = await startDemoServer();
});

afterAll(async () => {
  await cleanupAll();
  rmSync(work, { recursive: true, force: true });
  process.stdout.write(
    `conformance tasks-* scenarios against the demo server:\n${summary.join('\n')}\n`,
  );
});

it('the loopback guard refuses a connection off 127.0.0.1', async () => {
  const run = await suite.node([
    '-e',
    "await fetch('http://192.0.2.1/').catch(() => process.exit(3));",
  ]);
  expect(run.stderr).toContain(`${GUARD_MARKER} connection to 192.0.2.1`);
});

it('the suite has the ten tasks-* server scenarios', () => {
  expect(SCENARIOS).toHaveLength(10);
});

it.each(SCENARIOS)('%s passes against the demo server', async (scenario) => {
  const result = await suite.scenario(`${demo.url}/mcp`, scenario);
  summary.push(result.line);
  expect(result.run.stderr).not.toContain(GUARD_MARKER);
  expect(result.bad).toEqual([]);
  expect(result.checks.length).toBeGreaterThan(0);
  expect(result.run.code).toBe(0);
});
