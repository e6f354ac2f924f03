export { HTTP_ACCESS_LOG, runInRequestScope } from './http-access-log';
export { buildHttpLoggerOptions, createLogger, defaultLogFormat } from './logger.factory';
export { LoggingModule } from './logging.module';
export { isHealthPath } from './redaction';
export { taskLogger } from './task-logger';
