// Guards the checked-in schema snapshot (migrations/schema.sql) against drift: a migration added
// or changed without `npm run schema:snapshot` fails here, so reviewers always read the current
// tables, indexes and trigger bodies in one file.
import { readFileSync } from 'node:fs';
import { useTestDatabase } from '../../helpers/db';
import { dumpSchema, pgDumpMajor, SCHEMA_SNAPSHOT_FILE } from '../../../scripts/schema-snapshot';

const t = useTestDatabase();

// Decided when the file loads, so a run that cannot compare says so as a skipped test instead of
// passing having compared nothing: pg_dump refuses a newer server, and another major prints
// another dialect, so the run against the machine's server (DATABASE_URL) checks the snapshot and
// the embedded one (another major) cannot.
const dumpMajor = pgDumpMajor();
const serverMajor = Number(process.env.TEST_SERVER_MAJOR);
// CI installs PostgreSQL's client tools; elsewhere a missing pg_dump only skips this check.
if (dumpMajor === undefined && process.env.CI === 'true') throw new Error('pg_dump is not on PATH');
const cannot =
  dumpMajor === undefined
    ? 'pg_dump is not on PATH'
    : dumpMajor !== serverMajor
      ? `pg_dump ${dumpMajor} cannot dump this Postgres ${serverMajor}`
      : undefined;

(cannot ? it.skip : it)(
  `migrations/schema.sql is the schema the migrations build${cannot ? ` (skipped: ${cannot})` : ''}`,
  () => {
    const expected = readFileSync(SCHEMA_SNAPSHOT_FILE, 'utf8');
    // On failure: run `npm run schema:snapshot` (see docs/operations.md) and review the diff.
    expect(dumpSchema(t.url)).toBe(expected);
  },
);
