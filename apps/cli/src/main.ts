import 'reflect-metadata';
import { loadSettings, requireDatabaseUrl, runMain } from '@app/config';
import { createDataSource, missingMigrations, runMigrations } from '@app/persistence';
import { runKeysCommand } from './keys.command';

const USAGE = `usage:
  migrate                                   apply pending migrations, then exit
  migrate --check                           exit 0 if the schema is current, 3 if migrations are pending
  keys create --user USER --name NAME       create an API key (printed once, on the last line)
  keys list [--user USER]                   list keys (never the key itself)
  keys revoke ID                            revoke a key`;

/** Operator commands: `npm run migrate`, `npm run keys -- …`. */
runMain('cli', async () => {
  const [command, ...args] = process.argv.slice(2);
  if (command !== 'migrate' && command !== 'keys') {
    process.stderr.write(`${USAGE}\n`);
    process.exit(command === undefined || command === '--help' ? 0 : 64);
  }
  const settings = loadSettings();
  const dataSource = createDataSource(
    requireDatabaseUrl(settings.database.url),
    2,
    'mcp-task-gateway-cli',
  );
  await dataSource.initialize();
  try {
    if (command === 'migrate' && args.includes('--check')) {
      // Used by the apps' init containers: wait for the migrate Job, never migrate themselves.
      const missing = await missingMigrations(dataSource);
      process.stdout.write(
        missing.length ? `pending: ${missing.join(', ')}\n` : 'schema is up to date\n',
      );
      process.exitCode = missing.length ? 3 : 0;
    } else if (command === 'migrate') {
      const applied = await runMigrations(dataSource);
      process.stdout.write(
        applied.length === 0 ? 'schema is up to date\n' : `applied: ${applied.join(', ')}\n`,
      );
    } else {
      await runKeysCommand(dataSource, args);
    }
  } finally {
    await dataSource.destroy();
  }
});
