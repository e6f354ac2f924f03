import 'reflect-metadata';
import { loadSettings, runMain } from '@app/config';
import {
  Database,
  type DatabaseWaitLog,
  migrateDatabase,
  missingMigrations,
  retryWhileUnavailable,
} from '@app/persistence';
import { MIGRATIONS } from '../../../migrations';
import { ADMIN_USAGE, runAdminCommand } from './admin.command';
import { KEYS_USAGE, runKeysCommand } from './keys.command';
import { QUOTAS_USAGE, runQuotasCommand } from './quotas.command';

const USAGE = `usage:
  --version                                 print the version, then exit
  migrate                                   apply pending migrations, then exit
  migrate --check                           exit 0 if the schema is current, 3 if migrations are pending
  migrate --wait                            check every 5 s until the schema is current (exit 0)
  keys create --user USER --name NAME       create an API key (printed once, on the last line)
  keys list [--user USER]                   list keys (never the key itself)
  keys revoke ID                            revoke a key
  admin …                                   operator commands (admin --help)
  quotas list|set|clear …                   per-user submit quota overrides (quotas --help)`;

/** Each command's own usage, for `<command> --help` (stdout, exit 0). */
const COMMAND_USAGE: Readonly<Record<string, string>> = {
  migrate: USAGE.split('\n')
    .filter((line) => line.startsWith('  migrate'))
    .join('\n'),
  keys: KEYS_USAGE,
  admin: ADMIN_USAGE,
  quotas: QUOTAS_USAGE,
};

/** Between two checks of `migrate --wait`. */
const WAIT_INTERVAL_MS = 5_000;

/** `migrate --wait`'s lines about an unreachable database: plain text, as the rest it prints. */
const WAIT_LOG: DatabaseWaitLog = {
  warn: (fields, message) => process.stdout.write(`${message} (${keyValues(fields)})\n`),
  info: (fields, message) => process.stdout.write(`${message} (${keyValues(fields)})\n`),
};

function keyValues(fields: object): string {
  return Object.entries(fields)
    .map(([key, value]) => {
      const text = String(value);
      return `${key}=${/\s/.test(text) ? JSON.stringify(text) : text}`;
    })
    .join(' ');
}

// A container's PID 1 ignores signals it has no handler for, and the kubelet then waits out the
// whole grace period: the Job and the init containers must stop at once. Nothing is lost: a
// migration runs in a transaction, rolled back when the connection drops.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    process.stderr.write(`cli: ${signal}, stopping\n`);
    process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
  });
}

/** Operator commands: `npm run migrate`, `npm run keys -- …`, `npm run quotas -- …`. */
runMain('cli', async () => {
  const [command, ...args] = process.argv.slice(2);
  // Help needs no settings and no database: it answers before either is read.
  const help = args.includes('--help') || args.includes('-h');
  if (help && command !== undefined && COMMAND_USAGE[command] !== undefined) {
    process.stdout.write(`${COMMAND_USAGE[command]}\n`);
    return;
  }
  if (command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command !== 'migrate' && command !== 'keys' && command !== 'admin' && command !== 'quotas') {
    process.stderr.write(`${USAGE}\n`);
    process.exit(command === undefined ? 0 : 64);
  }
  const settings = loadSettings();
  const url = settings.database.url;
  const appName = 'mcp-task-gateway-cli';
  const { statementTimeoutMs, connectTimeoutMs, startupWaitMs } = settings.database;
  const db = Database.connect({ url, poolSize: 2, appName, statementTimeoutMs, connectTimeoutMs });
  try {
    if (command === 'migrate' && args.includes('--wait')) {
      // The apps' init containers: wait for the migrate Job, and for a database that is
      // unavailable (restarting, not up yet) as the apps do at start, for DATABASE_STARTUP_WAIT_MS
      // at a time; exit non-zero on a real error (bad URL, auth) so it shows as a crash, not as
      // an endless quiet wait (docs/operations.md, "How migrations run before the apps").
      for (;;) {
        const missing = await retryWhileUnavailable(
          () => missingMigrations(db, MIGRATIONS),
          startupWaitMs,
          WAIT_LOG,
        );
        if (missing.length === 0) break;
        process.stdout.write(`pending: ${missing.join(', ')}; waiting for the migrate Job\n`);
        await new Promise((resolve) => setTimeout(resolve, WAIT_INTERVAL_MS));
      }
      process.stdout.write('schema is up to date\n');
    } else if (command === 'migrate' && args.includes('--check')) {
      // Used by the apps' init containers: wait for the migrate Job, never migrate themselves.
      const missing = await missingMigrations(db, MIGRATIONS);
      process.stdout.write(
        missing.length ? `pending: ${missing.join(', ')}\n` : 'schema is up to date\n',
      );
      process.exitCode = missing.length ? 3 : 0;
    } else if (command === 'migrate') {
      // TypeORM's migration runner brings its own connection; only `migrate` opens it.
      const applied = await migrateDatabase(url, MIGRATIONS, appName);
      process.stdout.write(
        applied.length === 0 ? 'schema is up to date\n' : `applied: ${applied.join(', ')}\n`,
      );
    } else if (command === 'admin') {
      await runAdminCommand(db, args);
    } else if (command === 'quotas') {
      await runQuotasCommand(db, args);
    } else {
      await runKeysCommand(db, args);
    }
  } finally {
    await db.close();
  }
});
