import { DATABASE_ERROR_PREFIX, LeaseLostError, TransientTaskError } from '@app/common';
import type { ItemScope } from './item-scope';

// A handle the upstream returned must be stored (invariant 6): a write that fails for a reason
// other than a lost lease is retried until the lease's expiry, backing off from 250 ms to 2 s
// (a Postgres restart or failover takes seconds). The marks written before a send back off alike.
export const HANDLE_WRITE_MIN_PAUSE_MS = 250;
export const HANDLE_WRITE_MAX_PAUSE_MS = 2000;

/**
 * The driver's submit failed in a way that proves nothing landed upstream (or the toolset allows
 * repeating it): the retry must not be mistaken for a crash mid-submit.
 */
export class SubmitNotLandedError extends TransientTaskError {}

/**
 * Runs `write` until it lands: a lost lease ends it at once; any other failure leaves the
 * outcome unknown, and `write` runs again (told it is a retry, so it can re-read first) after a
 * pause, until the attempt's deadline; then it fails as not sent ({@link SubmitNotLandedError}):
 * these writes come before anything is sent upstream.
 */
export async function untilLanded(
  scope: ItemScope,
  what: string,
  write: (retry: boolean) => Promise<void>,
): Promise<void> {
  for (let retry = false, pause = HANDLE_WRITE_MIN_PAUSE_MS; ; retry = true) {
    try {
      await write(retry);
      return;
    } catch (error) {
      if (error instanceof LeaseLostError) throw error;
      const left = scope.leaseExpiresAtMs - Date.now();
      if (scope.signal.aborted || left <= pause) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new SubmitNotLandedError(
          `${DATABASE_ERROR_PREFIX}${what} could not be written, so nothing was sent: ${reason}`,
          { cause: error },
        );
      }
      scope.log.warn({ err: error }, `writing ${what} failed; re-reading and retrying`);
      await sleep(pause);
      pause = Math.min(pause * 2, HANDLE_WRITE_MAX_PAUSE_MS);
    }
  }
}

/** Retries logged: the first few, then every power of two (an outage may last minutes). */
export function isRetryLogged(attempt: number): boolean {
  return attempt <= 4 || (attempt & (attempt - 1)) === 0;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
