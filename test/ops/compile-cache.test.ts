// Guards the bundles' loader (scripts/bundle-apps.ts; docs/operations.md, "Process start and
// Node's compile cache"): on Node 22.1 or later a deployable keeps V8's compiled code of its
// bundle in Node's compile cache, and NODE_DISABLE_COMPILE_CACHE=1 turns that off.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE24 } from '../helpers/conformance-suite';

const CLI = join(__dirname, '..', '..', 'dist', 'apps', 'cli', 'main.js');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mtg-compile-cache-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI's usage text on `node` with TMPDIR at `dir`; the files under the cache after. */
function cacheFilesAfterRun(node: string, env: Record<string, string> = {}): string[] {
  const base: Record<string, string | undefined> = { ...process.env, TMPDIR: dir, ...env };
  delete base.NODE_COMPILE_CACHE;
  const run = spawnSync(node, [CLI, '--help'], { env: base, encoding: 'utf8' });
  expect([run.status, `${run.stdout}${run.stderr}`]).toEqual([0, expect.stringMatching(/^usage:/)]);
  return listFiles(join(dir, 'node-compile-cache'));
}

function listFiles(path: string): string[] {
  try {
    return readdirSync(path, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

it('on Node 24 the loader turns the cache on in the temporary directory', () => {
  expect(cacheFilesAfterRun(NODE24).length).toBeGreaterThan(0);
});

it('NODE_DISABLE_COMPILE_CACHE=1 keeps it off', () => {
  expect(cacheFilesAfterRun(NODE24, { NODE_DISABLE_COMPILE_CACHE: '1' })).toEqual([]);
});

it('the same bundle runs on the Node that runs the suite', () => {
  // On Node 20 there is no compile cache (and nothing is written); on 22.1+ there is.
  const files = cacheFilesAfterRun(process.execPath);
  const [major, minor] = process.versions.node.split('.').map(Number);
  const hasCache = major > 22 || (major === 22 && minor >= 1);
  expect(files.length > 0).toBe(hasCache);
});
