import { Client } from 'pg';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '@app/dev-db';
import { migrateDatabase } from '@app/persistence';
import { MIGRATIONS } from '../../migrations';
import { dropDeadRunDatabases, templateDatabaseName, withDatabase } from './db';
import { removeDeadFixtureFolders } from './leftovers';

/** DATABASE_POOL_SIZE of every app a test starts, not the default 10 (below). */
const TEST_POOL_SIZE = '5';

/**
 * Once per `jest` run: a Postgres to test against (DATABASE_URL, or an embedded server when it is
 * unset) and a migrated template database that each test file clones (test/helpers/db.ts).
 */
export default async function globalSetup(): Promise<void> {
  // The bundles' loader keeps V8's code of each app here after its first start (scripts/
  // app-loader.ts), so the suite's ~300 poller, API, CLI and demo-server starts compile each
  // bundle about once, not each start; Node 24 also keeps the unbundled fixtures' code here.
  process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'mcp-task-gateway-test-compile-cache');
  removeDeadFixtureFolders(join(__dirname, '..', '..', '.data'));
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const embedded = await startEmbeddedPostgres({
      dataDir: join(__dirname, '..', '..', '.data', `test-pg-${process.pid}`),
      ephemeral: true,
    });
    (globalThis as Record<string, unknown>).__embeddedPostgres = embedded;
    adminUrl = embedded.url;
  }
  const template = templateDatabaseName(process.pid);
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const [{ major }] = (
      await admin.query<{ major: string }>(
        `SELECT (current_setting('server_version_num')::int / 10000)::text AS major`,
      )
    ).rows;
    // For tests that must decide at load time whether they can run (schema-snapshot.test.ts).
    process.env.TEST_SERVER_MAJOR = major;
    const leftovers = await dropDeadRunDatabases(admin);
    if (leftovers.length > 0)
      process.stderr.write(`dropped ${leftovers.length} database(s) left by killed test runs\n`);
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${template}`);
  } finally {
    await admin.end();
  }
  await migrateDatabase(withDatabase(adminUrl, template), MIGRATIONS, 'test-template');
  process.env.TEST_ADMIN_DATABASE_URL = adminUrl;
  process.env.TEST_TEMPLATE_DATABASE = template;
  // Every app the tests start inherits this (the pollers of processes.ts pass it on), so the
  // five jest workers' processes stay within a server's default max_connections of 100
  // (jest.config.js). The chaos runner, outside jest, keeps the default.
  process.env.DATABASE_POOL_SIZE ??= TEST_POOL_SIZE;
}
