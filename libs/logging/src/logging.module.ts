import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { buildHttpLoggerOptions, createLogStream, LoggingOptions } from './logger.factory';

/**
 * The process's one logger for Nest apps, through nestjs-pino: HTTP access lines (health paths
 * skipped) and application lines share one pino instance and one redaction list.
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
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: [buildHttpLoggerOptions(options), createLogStream(options)],
        }),
      ],
      exports: [LoggerModule],
    };
  }
}
