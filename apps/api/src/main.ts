import 'reflect-metadata';
import { AddressInfo } from 'node:net';
import { Logger, PinoLogger } from 'nestjs-pino';
import { loadSettings, runMain } from '@app/config';
import { createLogger } from '@app/logging';
import { waitForDatabase } from '@app/persistence';
import { startTracing } from '@app/tracing';
import { MIGRATIONS } from '../../../migrations';
import { createApiApp } from './api-app.factory';
import { ApiMetricsServer } from './http/api-metrics.server';
import { installShutdownSignals } from './shutdown-signals';

runMain('api', async () => {
  const settings = loadSettings();
  startTracing('mcp-task-gateway-api', settings.tracing.endpoint);
  // Before Nest, with the schema check: its boot logs are buffered until the app exists, and
  // these must show as they happen (docs/operations.md, "Starting before the database").
  await waitForDatabase(
    { ...settings.database, appName: 'mcp-task-gateway-api-start', migrations: MIGRATIONS },
    createLogger({ level: settings.log.level, format: settings.log.format }),
  );
  const app = await createApiApp(settings);
  // Not Nest's enableShutdownHooks(): that closes the port at once, before readiness can say 503.
  installShutdownSignals(app, settings.api.shutdownDelayMs, (await app.resolve(PinoLogger)).logger);
  const { host, port: wanted } = settings.http;
  await (host === undefined ? app.listen(wanted) : app.listen(wanted, host));
  // The bound ports, so a launcher or a test that asked for port 0 learns them.
  const port = (app.getHttpServer().address() as AddressInfo).port;
  app
    .get(Logger)
    .log(`api listening on port ${port}, metrics on port ${app.get(ApiMetricsServer).port}`);
});
