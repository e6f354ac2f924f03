// Guards npm start and npm test run as root from a private (0700) folder: the embedded Postgres, run as the postgres OS user, still comes up and answers.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from 'pg';
import { stopProcess } from '../../helpers/processes';
import { useProcesses } from '../../helpers/process-scope';

const ROOT = join(__dirname, '..', '..', '..');
const asRoot = process.getuid?.() === 0;
/** The packages that hold the Postgres binaries: copied, so they sit inside the private folder. */
const COPIED = new Set(['embedded-postgres', '@embedded-postgres']);

// What a test leaves running (a cluster that never said it was ready) stops after the file.
const processes = useProcesses();
let base: string | undefined;
const relocated: string[] = [];

afterAll(() => {
  for (const dir of relocated) rmSync(dir, { recursive: true, force: true });
  if (base) rmSync(base, { recursive: true, force: true });
});

/**
 * A clone of this repository in a fresh 0700 directory, with the current build and a
 * node_modules whose Postgres packages are real copies (as `npm ci` there would leave them).
 */
function privateClone(): string {
  base = mkdtempSync(join(tmpdir(), 'mtg-private-'));
  expect(statSync(base).mode & 0o777).toBe(0o700);
  const repo = join(base, 'repo');
  execFileSync('git', ['clone', '--quiet', ROOT, repo]);
  cpSync(join(ROOT, 'dist'), join(repo, 'dist'), { recursive: true, verbatimSymlinks: true });
  const installed = realpathSync(join(ROOT, 'node_modules'));
  mkdirSync(join(repo, 'node_modules'));
  for (const name of readdirSync(installed)) {
    const from = join(installed, name);
    const to = join(repo, 'node_modules', name);
    if (COPIED.has(name)) cpSync(from, to, { recursive: true, verbatimSymlinks: true });
    else symlinkSync(from, to);
  }
  return repo;
}

/** Runs `node args` in `cwd` without DATABASE_URL; resolves with the line matching `ready`. */
async function runUntil(cwd: string, args: string[], ready: RegExp) {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  const child = processes.spawn(process.execPath, args, {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line: ${stderr}`)), 120_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}): ${stderr}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const found = ready.exec(line);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    });
  });
  return { child, match };
}

(asRoot ? it : it.skip)(
  'as root in a 0700 clone: the embedded Postgres (npm start) and the test setup (npm test) answer a query',
  async () => {
    const repo = privateClone();

    // npm start's database: a persistent cluster for <repo>/.data/postgres.
    const { child, match } = await runUntil(
      repo,
      ['dist/test/helpers/embedded-postgres.main.js', join(repo, '.data', 'postgres')],
      /^postgres ready (\S+)$/,
    );
    const client = new Client({ connectionString: match[1] });
    await client.connect();
    const { rows } = await client.query<{ dir: string; one: number }>(
      `SELECT current_setting('data_directory') AS dir, 1 AS one`,
    );
    await client.end();
    await stopProcess(child, 20_000);
    expect(rows[0].one).toBe(1);
    // The postgres user cannot reach the clone, so the cluster lives in a per-project tmp dir.
    expect(rows[0].dir.startsWith(base!)).toBe(false);
    expect(dirname(rows[0].dir)).toMatch(/mcp-task-gateway-pgdata-[0-9a-f]{12}$/);
    relocated.push(dirname(rows[0].dir));

    // npm test's setup without DATABASE_URL: an ephemeral cluster, migrated, then torn down.
    const setup = await runUntil(
      repo,
      [
        '-e',
        `const setup = require('./dist/test/helpers/global-setup.js').default;
         const teardown = require('./dist/test/helpers/global-teardown.js').default;
         setup()
           .then(() => console.log('template ' + process.env.TEST_TEMPLATE_DATABASE))
           .then(() => teardown())
           .then(() => console.log('torn down'));`,
      ],
      /^torn down$/,
    );
    await stopProcess(setup.child, 20_000);
  },
);
