import { LeaseLostError } from '@app/common';
import { isDatabaseUnavailable } from '@app/persistence';
import type { Logger } from 'pino';
import { HANDLE_WRITE_MAX_PAUSE_MS, HANDLE_WRITE_MIN_PAUSE_MS, sleep } from './until-landed';

/**
 * Writes the end of a call that cannot be repeated, which this process alone holds: a held
 * call's answer, or a submit answered at once with no task to poll (docs/leases.md, "A call's
 * end"). A write the database cannot serve now (down, restarting, out of disk:
 * `isDatabaseUnavailable`) is tried again, backing off from 250 ms to 2 s, for as long as `keep`
 * says the claim holds (it renews the lease where no guard does). A lost lease ends it (the
 * write's fence refused it, or `keep` found the lease gone), and so does any other error. A lost
 * lease leaves the end in this process only, so it is logged at error level with the status the
 * call ended in, for an operator; the next claimer applies the crash rules.
 */
export async function storeEnd(
  write: () => Promise<void>,
  keep: () => Promise<boolean>,
  log: Logger,
  status: string,
): Promise<void> {
  for (let attempt = 1, pause = HANDLE_WRITE_MIN_PAUSE_MS; ; attempt++) {
    try {
      await write();
      return;
    } catch (error) {
      const retry = isDatabaseUnavailable(error) && (await keep());
      if (error instanceof LeaseLostError || (isDatabaseUnavailable(error) && !retry)) {
        log.error({ err: error, status }, "the call's end could not be stored: lease lost");
      }
      if (!retry) throw error;
      if (attempt <= 4 || (attempt & (attempt - 1)) === 0) {
        log.warn({ err: error, attempt, status }, "storing the call's end failed; retrying");
      }
      await sleep(pause);
      pause = Math.min(pause * 2, HANDLE_WRITE_MAX_PAUSE_MS);
    }
  }
}
