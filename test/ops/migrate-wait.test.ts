// Guards against init containers and the migrate Job that ignore SIGTERM or never see the schema
// arrive, and an init container that gives up on a database that is only restarting
// (docs/operations.md, "How migrations run before the apps").
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { withDatabase } from '../helpers/db';
import type { NodeProcess } from '../helpers/node-process';
import { useProcesses, waitForExit } from '../helpers/process-scope';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

const CLI = 'apps/cli/main.js';
const admin = (): string => {
  const url = process.env.TEST_ADMIN_DATABASE_URL;
  if (!url) throw new Error('TEST_ADMIN_DATABASE_URL is not set (jest global setup)');
  return url;
};

async function adminQuery(sql: string): Promise<void> {
  const client = new Client({ connectionString: admin() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

// What a test starts stops after it, before its database is dropped.
const processes = useProcesses({ perTest: true });

/** An empty database: every migration is pending, as before the migrate Job ran. */
let name: string;
let url: string;
beforeEach(async () => {
  name = `mtg_mw_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE template0`);
  url = withDatabase(admin(), name);
});
afterEach(async () => {
  await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
});

let proxy: TcpProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

/** The test's database through a proxy that refuses every connection until told otherwise. */
async function refusedUrl(): Promise<string> {
  const target = new URL(url);
  proxy = await startTcpProxy(Number(target.port || 5432));
  proxy.refuseNew(true);
  target.port = String(proxy.port);
  return target.toString();
}

const UNREACHABLE =
  /^database unreachable at start; waiting for it \(reason=(?:\S+|"[^"]+") waitedMs=\d+ retryInMs=\d+\)$/;

/** `wait` says it waits for the migrate Job; once the Job ran, it says so and exits 0. */
async function endsOnceMigrated(wait: NodeProcess): Promise<void> {
  await wait.waitForLine(/^pending: .*waiting for the migrate Job$/, 20_000);
  const job = processes.node(CLI, ['migrate'], { DATABASE_URL: url });
  expect(await job.exited).toBe(0);
  await wait.waitForLine(/^schema is up to date$/, 20_000);
  expect(await wait.exited).toBe(0);
}

describe('migrate --wait (the init containers)', () => {
  it('waits while migrations are pending and exits 0 once the migrate Job applied them', async () => {
    const wait = processes.node(CLI, ['migrate', '--wait'], { DATABASE_URL: url });
    await endsOnceMigrated(wait);
  }, 60_000);

  it('exits promptly with 143 on SIGTERM instead of waiting out the grace period', async () => {
    const wait = processes.node(CLI, ['migrate', '--wait'], { DATABASE_URL: url });
    await wait.waitForLine(/^pending: /, 20_000);
    const sent = Date.now();
    wait.child.kill('SIGTERM');
    // Far below any grace period, and below the 5 s between checks: the signal is handled, not
    // noticed at the next check.
    const code = (await waitForExit(wait.child, 3_000)) ? await wait.exited : 'still running';
    expect({ code, withinMs: Date.now() - sent < 3_000 }).toEqual({ code: 143, withinMs: true });
  }, 30_000);

  it('waits for a database that refuses it, saying so, then for the migrate Job', async () => {
    const wait = processes.node(CLI, ['migrate', '--wait'], { DATABASE_URL: await refusedUrl() });
    await wait.waitForLine(UNREACHABLE, 20_000);
    expect(wait.child.exitCode).toBeNull();
    proxy?.refuseNew(false);
    await wait.waitForLine(/^database reachable; starting \(waitedMs=\d+\)$/, 20_000);
    await endsOnceMigrated(wait);
  }, 60_000);

  it('past DATABASE_STARTUP_WAIT_MS of a refusing database exits 1 naming the setting', async () => {
    const wait = processes.node(CLI, ['migrate', '--wait'], {
      DATABASE_URL: await refusedUrl(),
      DATABASE_STARTUP_WAIT_MS: '600',
    });
    expect(await wait.exited).toBe(1);
    expect(wait.lines.some((line) => UNREACHABLE.test(line))).toBe(true);
    expect(wait.stderr.join('\n')).toMatch(
      /^cli: failed to start: the database was unreachable at start \([^)]+\) and still was after \d+ s; DATABASE_STARTUP_WAIT_MS sets how long a process waits for it$/m,
    );
  }, 30_000);

  it('fails at once on a real error instead of waiting quietly', async () => {
    const wait = processes.node(CLI, ['migrate', '--wait'], {
      DATABASE_URL: withDatabase(admin(), `${name}_missing`),
    });
    expect(await wait.exited).toBe(1);
  }, 30_000);
});
