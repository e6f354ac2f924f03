import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Client, Pool } from 'pg';
import { Database } from '@app/persistence';
import { useFixture } from './fixture';
import { isRunning } from './leftovers';

export interface TestDatabase {
  /** Connection URL of this test's own database (migrated). */
  url: string;
  /** A pool on it, closed by `drop()`. */
  db: Database;
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database for one test file, cloned from the run's template (no migration
 * runs: Postgres copies the template's blocks, about 0.1 s). Uses DATABASE_URL's server, or the
 * embedded one the run started.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = required('TEST_ADMIN_DATABASE_URL');
  const template = required('TEST_TEMPLATE_DATABASE');
  const name = clonePrefix(template) + randomBytes(5).toString('hex');
  await adminQuery(adminUrl, `CREATE DATABASE ${name} TEMPLATE ${template}`);
  const url = withDatabase(adminUrl, name);
  const pool = new Pool({ connectionString: url, max: 10 });
  // pool.end() resolves before its clients' sockets have closed; the forced DROP below may then
  // terminate one, and an idle client's error becomes a pool 'error' event. Expected at teardown,
  // and a test's own queries still see their errors.
  pool.on('error', () => undefined);
  return ownedDatabase(adminUrl, name, pool);
}

/**
 * The database `name` on `adminUrl`'s server, created by the caller and reached through `pool`:
 * `drop()` ends the pool, then drops the database (forced: a straggling connection cannot keep it).
 */
export function ownedDatabase(adminUrl: string, name: string, pool: Pool): TestDatabase {
  return {
    url: withDatabase(adminUrl, name),
    db: new Database(pool),
    async drop() {
      await pool.end();
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * Registers a test file's database: created in beforeAll, dropped in afterAll (hooks declared
 * after this call run their afterAll later, so nothing of theirs may still use it then). The
 * database it returns is usable from beforeAll on.
 */
export function useTestDatabase(): TestDatabase {
  return useFixture('the test database', createTestDatabase, (database) => database.drop());
}

/**
 * A pool a test opens beside its database's own: idle clients' errors are ignored, since the
 * forced DROP at teardown (or a test's deliberate Postgres stop) may end them after `end()`
 * resolved, and an unhandled pool 'error' fails the whole file. Queries still see their errors.
 */
export function testPool(url: string, max: number): Pool {
  const pool = new Pool({ connectionString: url, max });
  pool.on('error', () => undefined);
  return pool;
}

// A run's databases are named after its jest process: `mtg_tpl_<host>_<pid>` (the migrated
// template) and `mtg_t_<host>_<pid>_<random>` (one clone per test file). The host tag keeps apart
// the runs of other hosts or containers sharing the server, whose pids mean nothing here.
const TEMPLATE_PREFIX = 'mtg_tpl_';
const CLONE_PREFIX = 'mtg_t_';
const HOST_TAG = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

/** The template database of the `jest` run with process id `pid` on this host. */
export function templateDatabaseName(pid: number): string {
  return `${TEMPLATE_PREFIX}${HOST_TAG}_${pid}`;
}

/** What the names of `template`'s clones start with. */
export function clonePrefix(template: string): string {
  return `${CLONE_PREFIX}${template.slice(TEMPLATE_PREFIX.length)}_`;
}

/**
 * Drops the databases of this host's earlier runs whose jest process is gone: a run killed
 * before its global teardown leaves its template and the clones of the files it was running.
 * Returns their names. A live run's databases (its process still exists) are left alone.
 */
export async function dropDeadRunDatabases(admin: Client): Promise<string[]> {
  const owner = new RegExp(`^(?:${TEMPLATE_PREFIX}|${CLONE_PREFIX})${HOST_TAG}_(\\d+)(?:_|$)`);
  const { rows } = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname ~ $1 ORDER BY datname`,
    [owner.source],
  );
  const dropped: string[] = [];
  for (const { datname } of rows) {
    if (isRunning(Number(owner.exec(datname)![1]))) continue;
    await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    dropped.push(datname);
  }
  return dropped;
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Runs one statement on `url` over a short-lived connection (CREATE/DROP DATABASE and the like). */
export async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  // A connection lost during the statement is an 'error' event too: the statement fails on its own.
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(`${name} is not set: run tests through jest (test/helpers/global-setup.ts)`);
  return value;
}
