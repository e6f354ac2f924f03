/**
 * The fencing rule of leases.md ("Fencing"), in the one place it is written: every write about a
 * claimed task row lands only while the claim's token is current and its lease unexpired, judged
 * by the database clock. Zero rows means the lease was lost; the caller discards its result and
 * never retries the write. `TaskLeaseRepository` is the only caller (pinned by
 * test/foundation/fenced-writes.test.ts).
 *
 * `$1` is the task ID and `$2` the lease token; callers number their own parameters from $3.
 * `guard` adds a condition (for example "no cancel request") whose failure is told apart from
 * a lost lease by a second, cheap fenced statement.
 */
export function fencedUpdateSql(set: string, guard = ''): string {
  return `UPDATE tasks SET ${set}
   WHERE id = $1 AND lease_token = $2 AND ${LEASE_LIVE}${guard ? ` AND ${guard}` : ''}
  RETURNING id`;
}

/** The lease half of the fence, shared by the row-by-row and the batched form. */
export const LEASE_LIVE = 'lease_expires_at > now()';

/** Clears the lease: the row is released to whoever claims it at its due time. */
export const CLEAR_LEASE = 'lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL';

/**
 * A terminal write (leases.md, "Scheduling after an attempt": due time NULL, lease cleared,
 * `completed_at = now()`), one SET list for `finish` and `finishMany`. Parameters `$3…$12`:
 * status, has-result, result, preview, truncated, artifact, has-progress, progress, error code,
 * error message (`terminalParams` in task-lease.repository.ts builds them in this order).
 */
export const TERMINAL_SET = terminalSet(
  Array.from({ length: 10 }, (_, i) => `$${i + 3}`) as TerminalRefs,
);

/**
 * The ten values of a terminal write, in `TERMINAL_SET`'s parameter order: status, has-result,
 * result, preview, truncated, artifact, has-progress, progress, error code, error message.
 */
type TerminalRefs = [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];

/** The terminal SET list over value references: `$n` parameters, or a batch's columns. */
function terminalSet(v: TerminalRefs): string {
  const [status, hasResult, result, preview, truncated, artifact, hasProgress, progress] = v;
  return `status = ${status},
       result = CASE WHEN ${hasResult}::boolean THEN ${result}::jsonb ELSE tasks.result END,
       result_preview = CASE WHEN ${hasResult}::boolean THEN ${preview} ELSE tasks.result_preview END,
       result_truncated = CASE WHEN ${hasResult}::boolean THEN ${truncated} ELSE tasks.result_truncated END,
       result_artifact = coalesce(${artifact}::jsonb, tasks.result_artifact),
       progress = CASE WHEN ${hasProgress}::boolean THEN ${progress}::jsonb ELSE tasks.progress END,
       input_required = NULL, error_code = ${v[8]}, error_message = ${v[9]},
       poll_count = tasks.poll_count + 1, ${CLEAR_LEASE}, next_attempt_at = NULL, completed_at = now()`;
}

/**
 * Group commit (leases.md, "Group commit"): many claimed rows written by ONE statement, each
 * still fenced by its own token and lease (database clock). `$1` is a JSON array of the rows'
 * values (`jsonb_to_recordset`), one object per row with `id` and `token`; a row missing from
 * RETURNING failed its fence (or its guard) exactly as its row-by-row write would have.
 * The batch's column names all start `new_`, `has_` or `delay_` so none can mean a task column.
 */
function batchedUpdateSql(set: string, columns: string, guard = '', returning = ''): string {
  return `UPDATE tasks SET ${set}
  FROM jsonb_to_recordset($1::jsonb) AS u(id text, token uuid${columns ? `, ${columns}` : ''})
 WHERE tasks.id = u.id AND tasks.lease_token = u.token AND ${LEASE_LIVE}${guard ? ` AND ${guard}` : ''}
RETURNING tasks.id, u.token::text AS token${returning ? `, ${returning}` : ''}`;
}

/**
 * `markSubmitStarted` for a batch (no columns beyond `id` and `token`): the durable mark that a
 * submit is about to go out, written before anything is sent.
 */
export const SUBMIT_STARTED_BATCH_SQL = batchedUpdateSql(
  'submit_started_at = now(), submit_attempts = tasks.submit_attempts + 1',
  '',
);

/**
 * The eight values of a handle write, in `SUBMITTED_SET`'s parameter order: status, remote task
 * ID, remote session ID, protocol version, driver state, pinned worker, delay (ms), questions.
 */
type SubmittedRefs = [string, string, string, string, string, string, string, string];

/**
 * Stores a remote handle after a submit and moves the task to `working` (or `input_required`),
 * due after the delay, or at once when a cancel is pending (the cancel phase takes the handle).
 */
function submittedSet(v: SubmittedRefs): string {
  const [status, remoteTaskId, sessionId, protocolVersion, driverState, pinned, delay, questions] =
    v;
  return `status = ${status}, remote_task_id = ${remoteTaskId}, remote_session_id = ${sessionId},
     remote_protocol_version = ${protocolVersion}, driver_state = ${driverState}::jsonb,
     pinned_worker_id = ${pinned}, submitted_at = now(), last_success_at = now(),
     consecutive_errors = 0, last_error = NULL, ${CLEAR_LEASE},
     next_attempt_at = ${delayUnlessCancelled(`${delay}::float8`)},
     input_required = ${questions}::jsonb`;
}

/** The handle write's SET list over parameters `$3…$10` (`submittedParams` builds them). */
export const SUBMITTED_SET = submittedSet(
  Array.from({ length: 8 }, (_, i) => `$${i + 3}`) as SubmittedRefs,
);

/** `recordSubmitted` for a batch, each row with its own handle (its columns start `new_`). */
export const SUBMITTED_BATCH_SQL = batchedUpdateSql(
  submittedSet([
    'u.new_status',
    'u.new_remote_task_id',
    'u.new_remote_session_id',
    'u.new_protocol_version',
    'u.new_driver_state',
    'u.new_pinned_worker_id',
    'u.delay_ms',
    'u.new_input_required',
  ]),
  `new_status text, new_remote_task_id text, new_remote_session_id text,
   new_protocol_version text, new_driver_state text, new_pinned_worker_id text, delay_ms float8,
   new_input_required text`,
);

/**
 * `applyPoll` for a batch: per row `new_status`, `has_progress`, `new_progress` (JSON text),
 * `new_input_required` (JSON text), `delay_ms`; not applied once a cancel is requested.
 */
export const APPLY_POLL_BATCH_SQL = batchedUpdateSql(
  `status = u.new_status,
   progress = CASE WHEN u.has_progress THEN u.new_progress::jsonb ELSE tasks.progress END,
   input_required = u.new_input_required::jsonb, consecutive_errors = 0, last_error = NULL,
   last_success_at = now(), poll_count = tasks.poll_count + 1, ${CLEAR_LEASE},
   next_attempt_at = now() + make_interval(secs => u.delay_ms / 1000)`,
  `new_status text, has_progress boolean, new_progress text, new_input_required text,
   delay_ms float8`,
  'tasks.cancel_requested_at IS NULL',
);

/**
 * `finish` for a batch, each row with its own snapshot (the terminal SET list over the batch's
 * columns); a row with `has_guard` is not ended once a cancel is requested (a poll's answer).
 */
export const FINISH_BATCH_SQL = batchedUpdateSql(
  terminalSet([
    'u.new_status',
    'u.has_result',
    'u.new_result',
    'u.new_preview',
    'u.new_truncated',
    'u.new_artifact',
    'u.has_progress',
    'u.new_progress',
    'u.new_error_code',
    'u.new_error_message',
  ]),
  `new_status text, has_result boolean, new_result text, new_preview text, new_truncated boolean,
   new_artifact text, has_progress boolean, new_progress text, new_error_code text,
   new_error_message text, has_guard boolean`,
  '(NOT u.has_guard OR tasks.cancel_requested_at IS NULL)',
);

/**
 * Sets `field` (an ISO time from the database clock) on the stored answers of the keys in `$3`,
 * or removes it; answers added meanwhile by the API are kept (the row is re-read under its lock).
 */
export function answerMarkSet(field: 'sent_at' | 'delivered_at', remove = false): string {
  const value = remove
    ? `input_responses -> k - '${field}'`
    : `input_responses -> k || jsonb_build_object('${field}', now())`;
  return `input_responses = input_responses || coalesce(
    (SELECT jsonb_object_agg(k, ${value}) FROM unnest($3::text[]) AS k
      WHERE input_responses ? k), '{}'::jsonb)`;
}

/** `now() + $n ms`, with the delay passed as a parameter. */
export function afterMs(param: number): string {
  return `now() + make_interval(secs => $${param}::float8 / 1000)`;
}

/**
 * `now() + $n ms`, or now when a cancel request is pending: a row given back with a delay (a
 * backoff, an overflow) must not make a cancel wait that delay out (leases.md, "Cancellation").
 */
export function afterMsUnlessCancelled(param: number): string {
  return delayUnlessCancelled(`$${param}::float8`);
}

/** `now() + ms` (an SQL expression), or now when a cancel request is pending. */
function delayUnlessCancelled(ms: string): string {
  return `CASE WHEN tasks.cancel_requested_at IS NULL
    THEN now() + make_interval(secs => ${ms} / 1000) ELSE now() END`;
}

/** Gives a leased row back to the cancel phase right away (a late poll after a cancel request). */
export const RELEASE_FOR_CANCEL_SQL = fencedUpdateSql(`${CLEAR_LEASE}, next_attempt_at = now()`);

/**
 * A held call's renewal (every lease/3; leases.md, "Timeouts"), fenced like every write,
 * returning whether a cancel was requested: the worker then aborts the call and ends the task
 * `cancelled`. The only write that moves `lease_expires_at` forward.
 */
export const RENEW_WATCHING_CANCEL_SQL = `
UPDATE tasks
   SET lease_expires_at = ${afterMs(3)},
       next_attempt_at  = ${afterMs(3)}
 WHERE id = $1 AND lease_token = $2 AND ${LEASE_LIVE}
RETURNING (cancel_requested_at IS NOT NULL) AS cancel_requested, cancel_reason`;

/**
 * `RENEW_WATCHING_CANCEL_SQL` for a batch of held calls: per row `delay_ms`, the lease length;
 * returns, per renewed row, whether a cancel was requested.
 */
export const RENEW_WATCHING_CANCEL_BATCH_SQL = batchedUpdateSql(
  `lease_expires_at = now() + make_interval(secs => u.delay_ms / 1000),
   next_attempt_at = now() + make_interval(secs => u.delay_ms / 1000)`,
  'delay_ms float8',
  '',
  '(tasks.cancel_requested_at IS NOT NULL) AS cancel_requested, tasks.cancel_reason',
);
