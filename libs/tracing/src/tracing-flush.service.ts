import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { stopTracing } from './tracing.setup';

/**
 * Exports the buffered spans when a Nest app closes (`enableShutdownHooks` runs this before
 * the process exits), so a stopped API loses no spans. A no-op when tracing is off.
 */
@Injectable()
export class TracingFlush implements OnApplicationShutdown {
  onApplicationShutdown(): Promise<void> {
    return stopTracing();
  }
}
