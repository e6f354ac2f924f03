import { LeaseLostError } from '@app/common';
import { isDatabaseUnavailable } from '@app/persistence';
import type { Logger } from 'pino';
import {
  HANDLE_WRITE_MAX_PAUSE_MS,
  HANDLE_WRITE_MIN_PAUSE_MS,
  isRetryLogged,
  sleep,
} from './until-landed';

export interface CallEnd {
  /** The fenced write that ends the task. */
  write: () => Promise<void>;
  /** Whether the claim still holds; renews the lease where no guard does. */
  keep: () => Promise<boolean>;
  /** The lease's length: a pause never outlasts a third of it, so `keep` renews in time. */
  leaseMs: number;
  log: Logger;
  /** The status the call ended in, for the log lines. */
  status: string;
}

/**
 * Writes the end of a call that cannot be repeated, which this process alone holds: a held
 * call's answer, or a submit answered at once with no task to poll (docs/leases.md, "A call's
 * end"). A write the database cannot serve now (down, restarting, out of disk:
 * `isDatabaseUnavailable`) is tried again, backing off from 250 ms to 2 s (at most a third of
 * the lease), for as long as `keep` says the claim holds. A lost lease ends it (the write's fence
 * refused it, or `keep` found the lease gone), and so does any other error. A lost lease leaves
 * the end in this process only, so it is logged at error level with the status the call ended
 * in, for an operator; the next claimer applies the crash rules.
 */
export async function storeEnd({ write, keep, leaseMs, log, status }: CallEnd): Promise<void> {
  const maxPauseMs = Math.min(HANDLE_WRITE_MAX_PAUSE_MS, leaseMs / 3);
  for (let attempt = 1, pause = Math.min(HANDLE_WRITE_MIN_PAUSE_MS, maxPauseMs); ; attempt++) {
    try {
      await write();
      return;
    } catch (error) {
      const unavailable = isDatabaseUnavailable(error);
      const retry = unavailable && (await keep());
      if (error instanceof LeaseLostError || (unavailable && !retry)) {
        log.error({ err: error, status }, "the call's end could not be stored: lease lost");
      }
      if (!retry) throw error;
      if (isRetryLogged(attempt)) {
        log.warn({ err: error, attempt, status }, "storing the call's end failed; retrying");
      }
      await sleep(pause);
      pause = Math.min(pause * 2, maxPauseMs);
    }
  }
}
