import { Client } from 'pg';
import { clonePrefix } from './db';

/** Drops the run's template database and stops the embedded server, if one was started. */
export default async function globalTeardown(): Promise<void> {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL;
  const template = process.env.TEST_TEMPLATE_DATABASE;
  if (adminUrl && template) {
    const admin = new Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      const rows = await admin.query<{ datname: string }>(
        `SELECT datname FROM pg_database WHERE starts_with(datname, $1)`,
        [clonePrefix(template)],
      );
      for (const row of rows.rows)
        await admin.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`);
      await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  }
  const embedded = (globalThis as Record<string, unknown>).__embeddedPostgres as
    { stop(): Promise<void> } | undefined;
  if (embedded) await embedded.stop();
}
