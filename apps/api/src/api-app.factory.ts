import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { Settings } from '@app/config';
import { ApiModule } from './api.module';
import { configureApp } from './configure-app';

/**
 * Creates the configured API app, not yet listening: main.ts and the tests both use it, so
 * tests run the API as deployed. Nest's own body parser is off; configureApp installs the one.
 */
export async function createApiApp(settings: Settings): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(ApiModule.forRoot(settings), {
    bufferLogs: true,
    bodyParser: false,
  });
  app.useLogger(app.get(Logger));
  configureApp(app, settings);
  return app;
}
