export {
  buildHttpLoggerOptions,
  buildLoggerOptions,
  createLogger,
  createLogStream,
  defaultLogFormat,
} from './logger.factory';
export type { LoggingOptions } from './logger.factory';
export { LOG_FORMATS, LOG_LEVELS } from './logging.enum';
export type { LogFormat, LogLevel } from './logging.enum';
export { LoggingModule } from './logging.module';
export { isHealthPath, REDACT_PATHS, REDACTED } from './redaction';
export { taskLogger } from './task-logger';
export type { TaskLogContext } from './task-logger';
