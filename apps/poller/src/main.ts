import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Logger, PinoLogger } from 'nestjs-pino';
import { loadMcpServersFile, loadSettings, runMain } from '@app/config';
import { ConfigError } from '@app/common';
import { createLogger } from '@app/logging';
import { waitForDatabase } from '@app/persistence';
import { startTracing } from '@app/tracing';
import { MIGRATIONS } from '../../../migrations';
import { PollerModule } from './poller.module';
import { installShutdownSignals } from './shutdown-signals';

runMain('poller', async () => {
  const settings = loadSettings();
  if (!settings.mcpServersFile) {
    throw new ConfigError('invalid environment:\n  - MCP_SERVERS_FILE: is required by the poller');
  }
  startTracing('mcp-task-gateway-poller', settings.tracing.endpoint);
  const servers = loadMcpServersFile(settings.mcpServersFile, process.env, settings.lease.ms);
  // Before Nest, with the schema check: its boot logs are buffered until the app exists, and
  // these must show as they happen (docs/operations.md, "Starting before the database").
  await waitForDatabase(
    { ...settings.database, appName: 'mcp-task-gateway-poller-start', migrations: MIGRATIONS },
    createLogger({ level: settings.log.level, format: settings.log.format }),
  );
  const app = await NestFactory.createApplicationContext(PollerModule.forRoot(settings, servers), {
    bufferLogs: true,
  });
  app.useLogger(app.get(Logger));
  installShutdownSignals(app, (await app.resolve(PinoLogger)).logger);
  await app.init();
});
