// Guards the rule that a test file starts processes only through a fixture (docs/testing.md,
// "Processes go through a fixture"): with no process scope open, as in this file, every spawner
// of test/helpers throws before it spawns anything; and no file under test/ but those spawners
// imports the child_process functions that return a live process.
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startApi, startApiProcess, createKeyWithCli } from '../../helpers/api';
import { ConformanceSuite } from '../../helpers/conformance-suite';
import { childProcesses } from '../../helpers/leak-guard.environment';
import { startNode } from '../../helpers/node-process';
import { startFailoverPair } from '../../helpers/postgres-failover';
import { startPostgresProcess } from '../../helpers/postgres-process';
import { startDemoServer, startPoller } from '../../helpers/processes';

const ROOT = join(__dirname, '..', '..', '..');
/** This file's own examples of imports, in strings. */
const SELF = relative(ROOT, __filename);
const RULE = /outside a fixture.*\(docs\/testing\.md, "Processes go through a fixture"\)/s;

/**
 * The helpers that may import a live spawn function: each registers what it starts with the
 * file's scope, and calls processScope() (which throws with no scope open) before it spawns.
 */
const SPAWNERS = [
  'test/helpers/process-scope.ts',
  'test/helpers/processes.ts',
  'test/helpers/node-process.ts',
  'test/helpers/postgres-process.ts',
  'test/helpers/conformance-suite.ts',
];

/** Files that may import one anyway, and why. Keep it short. */
const EXCEPTIONS: Record<string, string> = {
  'test/upstream/fixtures/stubborn-wrapper.ts':
    'a program the tests run as a stdio server (an npx-style wrapper), not a test: its ' +
    'grandchildren are what process-lifecycle.test.ts proves the pool kills',
};

/** The functions of node:child_process that return a process still running. */
const LIVE = new Set(['spawn', 'fork', 'exec', 'execFile']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|cts|js|mjs|cjs)$/.test(name) ? [path] : [];
  });
}

/** What a source file takes from node:child_process that can start a live process. */
function liveImports(source: string): string[] {
  const found: string[] = [];
  const from = `['"](?:node:)?child_process['"]`;
  for (const match of source.matchAll(new RegExp(`^import\\s+([^;]*?)\\s+from\\s+${from}`, 'gm'))) {
    const clause = match[1];
    if (/^type\s/.test(clause)) continue;
    const named = /\{([^}]*)\}/.exec(clause)?.[1] ?? '';
    for (const part of named.split(',')) {
      const [name] = part.trim().split(/\s+as\s+/);
      if (LIVE.has(name)) found.push(name);
    }
    // A default or namespace import reaches every function.
    const rest = clause
      .replace(/\{[^}]*\}/, '')
      .replace(/,/g, ' ')
      .trim();
    if (rest !== '') found.push(rest);
  }
  if (new RegExp(`require\\(\\s*${from}\\s*\\)`).test(source)) found.push('require(…)');
  if (new RegExp(`import\\(\\s*${from}\\s*\\)`).test(source)) found.push('import(…)');
  return found;
}

describe('with no process scope open', () => {
  let before: Set<number>;
  beforeEach(() => {
    before = new Set(childProcesses().keys());
  });
  afterEach(() => {
    // Nothing was spawned: the check comes before the spawn.
    expect([...childProcesses().keys()].filter((pid) => !before.has(pid))).toEqual([]);
  });

  it('startNode throws, naming the rule', () => {
    expect(() => startNode('apps/api/main.js')).toThrow(RULE);
  });

  it.each([
    ['startDemoServer', () => startDemoServer()],
    ['startPoller', () => startPoller({ databaseUrl: 'postgres://unused', serversFile: '/x' })],
    ['startApiProcess', () => startApiProcess('postgres://unused')],
    ['createKeyWithCli', () => createKeyWithCli('postgres://unused', 'user')],
    ['startPostgresProcess', () => startPostgresProcess(join(tmpdir(), 'mtg-never-made'))],
    [
      'ConformanceSuite.node',
      () => new ConformanceSuite(mkdtempSync(join(tmpdir(), 'mtg-scope-'))).node(['--version']),
    ],
  ])('%s rejects, naming the rule', async (_, start) => {
    await expect(start()).rejects.toThrow(RULE);
  });

  it('startApi rejects, naming the rule, and drops the database it made', async () => {
    await expect(startApi()).rejects.toThrow(RULE);
  });

  it('startFailoverPair rejects, naming the rule', async () => {
    await expect(startFailoverPair(join(tmpdir(), 'mtg-never-made'))).rejects.toThrow(RULE);
  });
});

it('no file under test/ but the spawners imports a child_process function that leaves a process running', () => {
  const offenders: string[] = [];
  const spawnersWithoutCheck: string[] = [];
  for (const path of sourceFiles(join(ROOT, 'test'))) {
    const file = relative(ROOT, path);
    if (file === SELF) continue;
    const imported = liveImports(readFileSync(path, 'utf8'));
    if (imported.length === 0 || file in EXCEPTIONS) continue;
    if (!SPAWNERS.includes(file)) offenders.push(`${file}: ${imported.join(', ')}`);
    else if (!/processScope\(|scope\.child\(/.test(readFileSync(path, 'utf8')))
      spawnersWithoutCheck.push(file);
  }
  expect(offenders).toEqual([]);
  expect(spawnersWithoutCheck).toEqual([]);
});

it('the import check sees named, renamed, namespace and required imports, and not spawnSync', () => {
  expect(liveImports(`import { spawnSync, execFileSync } from 'node:child_process';`)).toEqual([]);
  expect(liveImports(`import type { ChildProcess } from 'node:child_process';`)).toEqual([]);
  expect(
    liveImports(`import {\n  spawn as run,\n  type ChildProcess,\n} from 'child_process';`),
  ).toEqual(['spawn']);
  expect(liveImports(`import { execFile } from "node:child_process";`)).toEqual(['execFile']);
  expect(liveImports(`import * as cp from 'node:child_process';`)).toEqual(['* as cp']);
  expect(liveImports(`const cp = require('child_process');`)).toEqual(['require(…)']);
});
