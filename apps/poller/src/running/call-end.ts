import { LeaseLostError } from '@app/common';
import { isDatabaseUnavailable } from '@app/persistence';
import type { Logger } from 'pino';
import { abortKind } from './item-abort';
import { HANDLE_WRITE_MAX_PAUSE_MS, HANDLE_WRITE_MIN_PAUSE_MS, sleep } from './until-landed';

/**
 * Writes a held call's end (docs/leases.md, "A held call's end"). It is the only record of a
 * call that cannot be repeated, so a write the database cannot serve now (down, restarting, out
 * of disk: `isDatabaseUnavailable`) is tried again, backing off from 250 ms to 2 s, while the
 * call's guard goes on renewing the lease, for as long as the lease holds. A lost lease ends it
 * (the write's fence refused it, or a renewal found another claim's token), and so does any
 * other error. A lost lease leaves the end only in this process, so it is logged at error level
 * with the status the call ended in, for an operator; the next claimer applies the crash rules.
 */
export async function storeHeldEnd(
  write: () => Promise<void>,
  signal: AbortSignal,
  log: Logger,
  status: string,
): Promise<void> {
  for (let attempt = 1, pause = HANDLE_WRITE_MIN_PAUSE_MS; ; attempt++) {
    try {
      await write();
      return;
    } catch (error) {
      const lost = error instanceof LeaseLostError || abortKind(signal) === 'lease_lost';
      if (lost) {
        log.error({ err: error, status }, "the held call's end could not be stored: lease lost");
      }
      if (lost || !isDatabaseUnavailable(error)) throw error;
      if (attempt <= 4 || (attempt & (attempt - 1)) === 0) {
        log.warn({ err: error, attempt, status }, "storing the held call's end failed; retrying");
      }
      await sleep(pause);
      pause = Math.min(pause * 2, HANDLE_WRITE_MAX_PAUSE_MS);
    }
  }
}
