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
  taskId: string;
  /** The fenced write that ends the task. */
  write: () => Promise<unknown>;
  /** The same write once the lease has expired: lands while the row's token is ours. */
  writeIfStillOurs: () => Promise<boolean>;
  /** Whether the claim still holds; renews the lease where no guard does. */
  keep: () => Promise<boolean>;
  /**
   * Whether the task already ended with this end under this claim: a try whose reply was lost
   * had landed. Asked once the lease is found gone, before the end counts as lost.
   */
  storedEarlier: () => Promise<boolean>;
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
 * the lease), for as long as `keep` says the claim holds. Once the lease is gone (the write's
 * fence refused it, or `keep` found it expired), the end still lands while the row carries our
 * token, nobody having claimed it since, tried for as long as the database cannot serve it. Any
 * other error ends it, and so does another claim on the row: the end is then in this process
 * only, so it is logged at error level with the status the call ended in, for an operator, and
 * the next claimer applies the crash rules. A lease found gone is first checked against the
 * task row: a try whose reply was lost may have ended the task itself (`storedEarlier`).
 */
export async function storeEnd(end: CallEnd): Promise<void> {
  const { write, keep, log, status } = end;
  const maxPauseMs = Math.min(HANDLE_WRITE_MAX_PAUSE_MS, end.leaseMs / 3);
  let attempt = 1;
  let pause = Math.min(HANDLE_WRITE_MIN_PAUSE_MS, maxPauseMs);
  const retry = async (error: unknown) => {
    if (isRetryLogged(attempt)) {
      log.warn({ err: error, attempt, status }, "storing the call's end failed; retrying");
    }
    attempt++;
    await sleep(pause);
    pause = Math.min(pause * 2, maxPauseMs);
  };
  for (;;) {
    try {
      await write();
      return;
    } catch (error) {
      if (error instanceof LeaseLostError) break;
      if (!isDatabaseUnavailable(error)) throw error;
      if (!(await keep())) break;
      await retry(error);
    }
  }
  // The database may still be down: the loop below asks again once it answers.
  if (await storedEarlier(end).catch(unlessUnavailable)) return;
  log.warn({ status }, "the call's end outlasted its lease: storing it while the task is ours");
  for (;;) {
    try {
      if (!(await end.writeIfStillOurs())) {
        if (await storedEarlier(end)) return;
        return lost(end);
      }
      log.warn(
        { status },
        "stored the call's end after its lease expired: no other claim meanwhile",
      );
      return;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      await retry(error);
    }
  }
}

/** The lease is gone: did a try whose reply was lost end the task? Logged when it did. */
async function storedEarlier(end: CallEnd): Promise<boolean> {
  if (!(await end.storedEarlier())) return false;
  end.log.info(
    { status: end.status },
    "the call's end had been stored by a try whose reply was lost",
  );
  return true;
}

/** An unreachable database is no answer (false); any other error is thrown on. */
function unlessUnavailable(error: unknown): false {
  if (isDatabaseUnavailable(error)) return false;
  throw error;
}

/**
 * The row no longer carries our token, and its end is not ours (`storedEarlier` said so): another
 * claim took it, and the end is in this process only.
 */
function lost({ log, status, taskId }: CallEnd): never {
  log.error({ status }, "the call's end could not be stored: the task is no longer this claim's");
  throw new LeaseLostError(taskId);
}
