import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { loadSettings, requireDatabaseUrl, runMain } from '@app/config';
import { ApiModule } from './api.module';
import { configureApp } from './configure-app';

runMain('api', async () => {
  const settings = loadSettings();
  requireDatabaseUrl(settings.database.url);
  const app = await NestFactory.create(ApiModule.forRoot(settings), { bufferLogs: true });
  app.useLogger(app.get(Logger));
  configureApp(app, settings);
  app.enableShutdownHooks();
  await app.listen(settings.http.port);
});
