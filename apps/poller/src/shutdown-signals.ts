import type { INestApplicationContext } from '@nestjs/common';
import type { Logger } from 'pino';
import { stopTracing } from '@app/tracing';

/**
 * SIGTERM/SIGINT: the first closes the app (the lifecycle drains, then the pool closes) and
 * exits 0; a second exits at once with 1. Nest's own shutdown hooks ignore a second signal, so
 * the poller installs this instead of `enableShutdownHooks()` (graphile-worker's signals.ts
 * does the same). Kubernetes' grace period must exceed DRAIN_TIMEOUT_MS plus a few seconds.
 */
export function installShutdownSignals(app: INestApplicationContext, log: Logger): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      log.warn({ signal }, 'second signal: exiting now without draining');
      process.exit(1);
    }
    closing = true;
    log.info({ signal }, 'shutting down');
    // Buffered spans are exported before the exit (a no-op when tracing is off).
    app.close().then(
      () => stopTracing().then(() => process.exit(process.exitCode ?? 0)),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
