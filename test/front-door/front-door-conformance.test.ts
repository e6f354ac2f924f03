// Guards against the MCP front door failing the official conformance suite: its tasks-* server
// scenarios and server-initialize, ping, tools-list and dns-rebinding-protection, with the demo
// server's fixture tools served through a real poller under their own names
// (deploy/conformance/mcp-servers.json).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConformanceSuite,
  GUARD_MARKER,
  node24Available,
  taskScenarios,
} from '../helpers/conformance-suite';
import { useFrontDoor } from './front-door-harness';

const ROOT = join(__dirname, '..', '..');
const CONFIG = JSON.parse(
  readFileSync(join(ROOT, 'deploy', 'conformance', 'mcp-servers.json'), 'utf8'),
) as { mcpServers: { fixtures: { taskToolsets: unknown[]; protocolVersion: string } } };

/**
 * Checks that fail today, each with the reason. A check listed here that passes fails the test
 * too, so the list cannot go stale.
 */
const KNOWN_FAILURES: Record<string, string> = {};

// The suite runs on Node 24: skipped where it is not installed (never under CI=true).
const HAS_NODE24 = node24Available('the conformance suite against the front door');
const itWithNode24 = HAS_NODE24 ? it : it.skip;
const TASK_SCENARIOS = HAS_NODE24 ? taskScenarios() : [];
const SCENARIOS = [
  ...TASK_SCENARIOS,
  'server-initialize',
  'ping',
  'tools-list',
  'dns-rebinding-protection',
];

const work = mkdtempSync(join(tmpdir(), 'front-door-conformance-'));
const suite = new ConformanceSuite(work);
const { taskToolsets, ...server } = CONFIG.mcpServers.fixtures;
// Without Node 24 every test is skipped, and jest runs none of the file's hooks: nothing starts.
const fd = useFrontDoor({
  toolsets: taskToolsets,
  server: { protocolVersion: server.protocolVersion },
  // Its fixtures are 2026-07-28 tools: served by a server that speaks nothing else.
  demoArgs: ['--strict-2026'],
  apiEnv: { MCP_ANONYMOUS_USER: 'conformance' },
});
const summary: string[] = [];

// After the front door's own afterAll has stopped it.
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  process.stdout.write(`conformance against the front door:\n${summary.join('\n')}\n`);
});

itWithNode24('runs the ten tasks-* scenarios', () => {
  expect(TASK_SCENARIOS).toHaveLength(10);
});

itWithNode24.each(SCENARIOS)('%s passes against the front door', async (scenario) => {
  const url = `${fd.api.url.replace('127.0.0.1', 'localhost')}/mcp`;
  const result = await suite.scenario(url, scenario, KNOWN_FAILURES);
  summary.push(result.line);
  expect(result.run.stderr).not.toContain(GUARD_MARKER);
  expect(result.bad).toEqual([]);
  expect(result.stale).toEqual([]);
  expect(result.checks.length).toBeGreaterThan(0);
});
