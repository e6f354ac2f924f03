// Guards the checked-in schema snapshot (migrations/schema.sql) against drift: a migration added
// or changed without `npm run schema:snapshot` fails here, so reviewers always read the current
// tables, indexes and trigger bodies in one file.
import { readFileSync } from 'node:fs';
import { useTestDatabase } from '../helpers/db';
import { dumpSchema, pgDumpMajor, SCHEMA_SNAPSHOT_FILE } from '../../scripts/schema-snapshot';

const t = useTestDatabase();

it('migrations/schema.sql is the schema the migrations build', async () => {
  const dumpMajor = pgDumpMajor();
  if (dumpMajor === undefined) {
    // CI installs PostgreSQL's client tools; elsewhere a missing pg_dump only skips this check.
    if (process.env.CI === 'true') throw new Error('pg_dump is not on PATH');
    return;
  }
  const [{ server_version_num: version }] = await t.db.query<{ server_version_num: string }>(
    `SELECT current_setting('server_version_num') AS server_version_num`,
  );
  // pg_dump refuses a newer server, and another major prints another dialect: the run against
  // the machine's server (DATABASE_URL) checks the snapshot; the embedded one cannot.
  if (Math.floor(Number(version) / 10_000) !== dumpMajor) return;
  const expected = readFileSync(SCHEMA_SNAPSHOT_FILE, 'utf8');
  // On failure: run `npm run schema:snapshot` (see docs/operations.md) and review the diff.
  expect(dumpSchema(t.url)).toBe(expected);
});
