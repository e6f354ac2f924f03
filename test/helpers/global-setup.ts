import { Client } from 'pg';
import { join } from 'node:path';
import { createDataSource, runMigrations } from '@app/persistence';
import { startEmbeddedPostgres } from '@app/dev-db';
import { MIGRATIONS } from '../../migrations';
import { withDatabase } from './db';

/**
 * Once per `jest` run: a Postgres to test against (DATABASE_URL, or an embedded server when it is
 * unset) and a migrated template database that each test file clones (test/helpers/db.ts).
 */
export default async function globalSetup(): Promise<void> {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const embedded = await startEmbeddedPostgres({
      dataDir: join(__dirname, '..', '..', '.data', `test-pg-${process.pid}`),
      ephemeral: true,
    });
    (globalThis as Record<string, unknown>).__embeddedPostgres = embedded;
    adminUrl = embedded.url;
  }
  const template = `mtg_tpl_${process.pid}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${template}`);
  } finally {
    await admin.end();
  }
  const dataSource = createDataSource(
    withDatabase(adminUrl, template),
    MIGRATIONS,
    2,
    'test-template',
  );
  await dataSource.initialize();
  try {
    await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
  process.env.TEST_ADMIN_DATABASE_URL = adminUrl;
  process.env.TEST_TEMPLATE_DATABASE = template;
}
