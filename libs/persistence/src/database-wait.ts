import { MigrationList } from './data-source';
import { Database, DatabaseOptions } from './database';
import { isDatabaseUnavailable } from './database-errors';
import { assertSchemaCurrent } from './migrator';

/**
 * What {@link waitForDatabase} needs to know: the app's pool settings, how long to try, and the
 * migrations the app's build needs.
 */
export interface DatabaseWaitOptions extends Omit<DatabaseOptions, 'poolSize'> {
  /** How long to keep trying (DATABASE_STARTUP_WAIT_MS); 0: one attempt. */
  startupWaitMs: number;
  /** Every migration this build needs (the root `migrations/` index): checked by each attempt. */
  migrations: MigrationList;
}

/** Where the waiting is said: a pino logger, or anything with its `warn` and `info`. */
export interface DatabaseWaitLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** The first pause between attempts, doubled after each up to {@link MAX_PAUSE_MS}. */
const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 5000;

/**
 * The database stayed unreachable for the whole startup wait. Its message names the setting
 * that would wait longer and the last failure's code, never the URL (which holds the password).
 */
export class DatabaseUnreachableError extends Error {
  constructor(waitedMs: number, reason: string) {
    super(
      `the database was unreachable at start (${reason}) and still was after ${Math.round(
        waitedMs / 1000,
      )} s; DATABASE_STARTUP_WAIT_MS sets how long a process waits for it`,
    );
    this.name = 'DatabaseUnreachableError';
  }
}

/**
 * Waits, at a process's start, until the database answers and holds the schema the build needs
 * (docs/operations.md, "Starting before the database"): an API or a poller started while Postgres
 * restarts, fails over or is still starting (a compose stack, a node restart) waits for it instead
 * of exiting and being restarted with the orchestrator's growing backoff. Each attempt is the
 * schema check itself, so no statement of the start runs outside this wait: the app built after
 * it reads nothing before it serves, and a database lost in between is waited for there as at
 * run time. A missing migration is thrown at once, as {@link retryWhileUnavailable} throws
 * anything but unavailability.
 */
export async function waitForDatabase(
  options: DatabaseWaitOptions,
  log: DatabaseWaitLog,
): Promise<void> {
  // A pool of one with the app's own settings (connect timeout, statement bound, session
  // options): a failed attempt leaves no connection behind, so each query opens a new one.
  const db = Database.connect({ ...options, poolSize: 1 });
  try {
    await retryWhileUnavailable(
      () => assertSchemaCurrent(db, options.migrations),
      options.startupWaitMs,
      log,
    );
  } finally {
    await db.close();
  }
}

/**
 * Runs `attempt` until it succeeds, again while it fails because the database is unavailable
 * (isDatabaseUnavailable: refused, reset, timed out, starting up, shutting down, too many
 * connections), 0.25 s after the first failure and twice as long after each next up to 5 s, for
 * at most `waitMs` (0: one attempt); then throws {@link DatabaseUnreachableError}. Anything else
 * (a wrong password, a database that does not exist) is thrown at once. One `warn` per failed
 * attempt says so, with its code and the time waited, never the URL; an `info` when it answers
 * after one. The apps' start (waitForDatabase) and `migrate --wait` wait this way.
 */
export async function retryWhileUnavailable<T>(
  attempt: () => Promise<T>,
  waitMs: number,
  log: DatabaseWaitLog,
): Promise<T> {
  const startedAt = Date.now();
  let pause = FIRST_PAUSE_MS;
  let waited = false;
  for (;;) {
    try {
      const result = await attempt();
      if (waited) log.info({ waitedMs: Date.now() - startedAt }, 'database reachable; starting');
      return result;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      const waitedMs = Date.now() - startedAt;
      const reason = failureReason(error);
      const left = waitMs - waitedMs;
      if (left <= 0) throw new DatabaseUnreachableError(waitedMs, reason);
      const retryInMs = Math.min(pause, left);
      log.warn({ reason, waitedMs, retryInMs }, 'database unreachable at start; waiting for it');
      waited = true;
      await new Promise((resolve) => setTimeout(resolve, retryInMs));
      pause = Math.min(pause * 2, MAX_PAUSE_MS);
    }
  }
}

/** The failure's code (ECONNREFUSED, 57P03 …), or its message when it has none. */
function failureReason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}
