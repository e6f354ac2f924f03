// Guards against the demo server's 2026-07-28 side failing the official conformance suite's tasks-* scenarios.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConformanceSuite,
  GUARD_MARKER,
  node24Available,
  taskScenarios,
} from '../helpers/conformance-suite';
import { startDemoServer, type DemoServerProcess } from '../helpers/processes';
import { useProcesses } from '../helpers/process-scope';

// The suite runs on Node 24: skipped where it is not installed (never under CI=true).
const HAS_NODE24 = node24Available('the conformance suite against the demo server');
const itWithNode24 = HAS_NODE24 ? it : it.skip;
const SCENARIOS = HAS_NODE24 ? taskScenarios() : ['tasks-*'];
const work = mkdtempSync(join(tmpdir(), 'demo-conformance-'));
const suite = new ConformanceSuite(work);
// The demo server and the suite's runs stop after the file.
useProcesses();
let demo: DemoServerProcess;
const summary: string[] = [];

beforeAll(async () => {
  if (!HAS_NODE24) return;
  demo = await startDemoServer();
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  process.stdout.write(
    `conformance tasks-* scenarios against the demo server:\n${summary.join('\n')}\n`,
  );
});

itWithNode24('the loopback guard refuses a connection off 127.0.0.1', async () => {
  const run = await suite.node([
    '-e',
    "await fetch('http://192.0.2.1/').catch(() => process.exit(3));",
  ]);
  expect(run.stderr).toContain(`${GUARD_MARKER} connection to 192.0.2.1`);
});

itWithNode24('the suite has the ten tasks-* server scenarios', () => {
  expect(SCENARIOS).toHaveLength(10);
});

itWithNode24.each(SCENARIOS)('%s passes against the demo server', async (scenario) => {
  const result = await suite.scenario(`${demo.url}/mcp`, scenario);
  summary.push(result.line);
  expect(result.run.stderr).not.toContain(GUARD_MARKER);
  expect(result.bad).toEqual([]);
  expect(result.checks.length).toBeGreaterThan(0);
  expect(result.run.code).toBe(0);
});
