import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ConnectionCloser } from '@app/lifecycle';
import { DrainState } from './health/drain-state';

const SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

/**
 * SIGTERM/SIGINT: readiness answers 503 at once, while the API keeps serving every other request
 * for `delayMs` (SHUTDOWN_DELAY_MS), so load balancers take the replica out before its port
 * closes; then the app closes (event streams end, held requests answer, every open connection
 * closes once it has nothing left to answer, the pool closes) and the signal is raised again, so
 * the exit status is the signal's (143 for SIGTERM). A second signal is ignored, as with Nest's
 * `enableShutdownHooks()`, which would close the port at once.
 */
export function installShutdownSignals(app: INestApplication, delayMs: number, log: Logger): void {
  let closing = false;
  const connections = new ConnectionCloser(app.getHttpServer() as Server);
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) return;
    closing = true;
    app.get(DrainState).start();
    log.info({ signal, delayMs }, 'shutting down: not ready, still serving until the delay ends');
    delay(delayMs)
      .then(() => {
        connections.closeWhenAnswered();
        return app.close();
      })
      .then(
        () => {
          for (const s of SIGNALS) process.removeListener(s, onSignal);
          process.kill(process.pid, signal);
        },
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  for (const s of SIGNALS) process.on(s, onSignal);
}
