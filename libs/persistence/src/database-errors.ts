/**
 * How the gateway tells a database that cannot serve a statement now (the API's 503, a poller's
 * retry) from one that refused the statement (a bug, a 500), for the pool in database.ts and
 * the callers that decide what an error means.
 */
import { DatabaseError } from 'pg';

/** True for pg's error of a statement that got no answer within its `query_timeout`. */
export function isStatementTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}

/** SQLSTATE of a write refused by a server that takes none (a standby, a read-only primary). */
const READ_ONLY_STATE = '25006';

/** True for a statement refused because the server takes no writes now. */
export function isReadOnly(error: unknown): boolean {
  return error instanceof DatabaseError && error.code === READ_ONLY_STATE;
}

/**
 * SQLSTATEs of a database that is going away or cannot take the connection now, or that did not
 * finish a statement in time: 57014 is the server's `statement_timeout` (or a cancel), 25P03 its
 * `idle_in_transaction_session_timeout` (statementBounds, database.ts), 25006 a write to a server
 * that takes none now (a standby the address still reaches after a switchover, until the next
 * connection reaches the primary; docs/operations.md, "Database failover").
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '57014', '25P03', READ_ONLY_STATE]);
/**
 * SQLSTATE classes of a database that cannot serve the statement now, whatever the statement:
 * 08 the connection, 53 its resources (53100 a full disk, 53200 its memory, 53300 too many
 * connections; docs/operations.md, "A full disk").
 */
const UNAVAILABLE_CLASSES = ['08', '53'];
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
]);

/**
 * True for an error that says the database could not serve the statement now (no free pooled
 * connection within the connect timeout, a refused or lost connection, a server shutting down,
 * out of connections, memory or disk, no answer within the statement timeout), not that the
 * statement was wrong: a caller may answer "busy, retry" (the API's 503) instead of an internal
 * error.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (
      UNAVAILABLE_CLASSES.some((cls) => code.startsWith(cls)) ||
      UNAVAILABLE_STATES.has(code) ||
      UNAVAILABLE_CODES.has(code)
    ) {
      return true;
    }
  }
  // pg-pool's checkout timeout, pg's lost connection and its statement timeout carry no code,
  // only these messages.
  return /timeout exceeded when trying to connect|Connection terminated|^Query read timeout$/.test(
    error.message,
  );
}

/**
 * True for an error of the database itself: a statement it refused (a `DatabaseError` with its
 * SQLSTATE) or a connection it could not give or keep. The drivers' errors are typed task errors,
 * so a caller can tell a database failure from an upstream one and say so.
 */
export function isDatabaseError(error: unknown): boolean {
  return error instanceof DatabaseError || isDatabaseUnavailable(error);
}
