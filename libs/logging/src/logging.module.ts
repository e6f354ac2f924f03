import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { pinoHttp } from 'pino-http';
import { HTTP_ACCESS_LOG } from './http-access-log';
import { buildHttpLoggerOptions, createLogStream, LoggingOptions } from './logger.factory';

/**
 * The process's one logger for Nest apps, through nestjs-pino: HTTP access lines (health paths
 * skipped) and application lines share one pino instance and one redaction list. Global, like the
 * settings: imported once by the root module, injectable in every feature module.
 */
@Module({})
export class LoggingModule {
  /**
   * @param options level and format, usually from the validated config.
   * @example
   * // root module: imports: [LoggingModule.forRoot({ level: 'info', format: 'json' })]
   * // main.ts: const app = await NestFactory.create(AppModule, { bufferLogs: true });
   * //          app.useLogger(app.get(Logger)); // Logger from nestjs-pino
   */
  static forRoot(options: LoggingOptions = {}): DynamicModule {
    const httpOptions = buildHttpLoggerOptions(options);
    const stream = createLogStream(options);
    return {
      module: LoggingModule,
      global: true,
      imports: [LoggerModule.forRoot({ pinoHttp: [httpOptions, stream] })],
      // The same options and stream as the middleware nestjs-pino mounts, for a route served
      // outside Nest's middleware (the API's submit fast path): its lines cannot differ.
      providers: [{ provide: HTTP_ACCESS_LOG, useFactory: () => pinoHttp(httpOptions, stream) }],
      exports: [LoggerModule, HTTP_ACCESS_LOG],
    };
  }
}
