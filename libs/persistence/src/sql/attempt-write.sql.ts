/**
 * The attempt's writes that are group-committed (docs/leases.md, "Group commit"): the
 * submit-started mark, the remote handle, a poll's answer, the terminal write and a held call's
 * renewal. Each is described once, over named values, and built both ways by `fencedStatement`
 * (fenced-write.sql.ts): a repository built with batching sends the batch form, one built
 * without sends the row-by-row form. Both stay because a batch of one costs more than the
 * row-by-row statement (bench/batch-of-one.bench.ts: 1.3× the wall time, 1.4–1.7× the backend
 * CPU; docs/benchmarks.md, "A write alone").
 */
import {
  CLEAR_LEASE,
  FencedWrite,
  NOT_CANCELLED,
  WriteColumns,
  delayUnlessCancelled,
  fencedStatement,
  fencedWriteSql,
  parameterRefs,
} from './fenced-write.sql';

/**
 * `markSubmitStarted`: the durable mark that a submit is about to go out, written before
 * anything is sent. The lease row is only locked.
 */
export const SUBMIT_STARTED = fencedStatement({}, () => ({
  task: 'submit_started_at = now(), submit_attempts = tasks.submit_attempts + 1',
}));

/** A handle write's values (`submittedValues` in task-lease.repository.ts builds them). */
export const SUBMITTED_COLUMNS = {
  new_status: 'text',
  new_remote_task_id: 'text',
  new_remote_session_id: 'text',
  new_protocol_version: 'text',
  new_driver_state: 'text',
  new_pinned_worker_id: 'text',
  delay_ms: 'float8',
  new_input_required: 'text',
} as const satisfies WriteColumns<string>;

type SubmittedValues = Readonly<Record<keyof typeof SUBMITTED_COLUMNS, string>>;

/**
 * Stores a remote handle after a submit and moves the task to `working` (or `input_required`),
 * due after the delay, or at once when a cancel is pending (the cancel phase takes the handle).
 * The pinned worker is the claim's rule, so the lease row keeps it too.
 */
function submittedWrite(v: SubmittedValues, tokenOnly = false): FencedWrite {
  return {
    lease: `${CLEAR_LEASE}, queued = false, pinned_worker_id = ${v.new_pinned_worker_id},
     next_attempt_at = ${delayUnlessCancelled(`${v.delay_ms}::float8`)}`,
    task: `status = ${v.new_status}, remote_task_id = ${v.new_remote_task_id},
     remote_session_id = ${v.new_remote_session_id},
     remote_protocol_version = ${v.new_protocol_version},
     driver_state = ${v.new_driver_state}::jsonb, pinned_worker_id = ${v.new_pinned_worker_id},
     submitted_at = now(), last_success_at = now(), consecutive_errors = 0, last_error = NULL,
     input_required = ${v.new_input_required}::jsonb`,
    tokenOnly,
  };
}

/** `recordSubmitted`. */
export const SUBMITTED = fencedStatement(SUBMITTED_COLUMNS, (v) => submittedWrite(v));

/**
 * The handle write once the lease has expired: it still lands while the row's token is ours,
 * that is, nobody claimed the row since (leases.md, "Remote handles"). Row by row only.
 */
export const SUBMITTED_IF_STILL_OURS_SQL = fencedWriteSql(
  submittedWrite(parameterRefs(SUBMITTED_COLUMNS), true),
);

/**
 * `applyPoll`: a poll's non-terminal answer applied, due again after the delay; not once a
 * cancel is requested. Answers the API stored while this lease was held (`answers_waiting`) make
 * the row due at once instead: the attempt did not have them (docs/contracts.md, "Answering
 * questions").
 */
export const APPLY_POLL = fencedStatement(
  {
    new_status: 'text',
    has_progress: 'boolean',
    new_progress: 'text',
    new_input_required: 'text',
    delay_ms: 'float8',
  },
  (v) => ({
    lease: `${CLEAR_LEASE}, answers_waiting = false,
   next_attempt_at = CASE WHEN task_leases.answers_waiting THEN now()
                          ELSE now() + make_interval(secs => ${v.delay_ms}::float8 / 1000) END`,
    task: `status = ${v.new_status},
   progress = CASE WHEN ${v.has_progress} THEN ${v.new_progress}::jsonb ELSE tasks.progress END,
   input_required = ${v.new_input_required}::jsonb, consecutive_errors = 0, last_error = NULL,
   last_success_at = now(), poll_count = tasks.poll_count + 1`,
    guard: NOT_CANCELLED,
  }),
);

/** A terminal write's values (`terminalValues` in attempt-values.ts builds them). */
export const FINISH_COLUMNS = {
  new_status: 'text',
  has_result: 'boolean',
  new_result: 'text',
  new_preview: 'text',
  new_truncated: 'boolean',
  new_artifact: 'text',
  has_progress: 'boolean',
  new_progress: 'text',
  new_error_code: 'text',
  new_error_message: 'text',
  has_guard: 'boolean',
} as const satisfies WriteColumns<string>;

function finishWrite(v: Readonly<Record<keyof typeof FINISH_COLUMNS, string>>): FencedWrite {
  return {
    ends: true,
    task: `status = ${v.new_status},
     result = CASE WHEN ${v.has_result} THEN ${v.new_result}::jsonb ELSE tasks.result END,
     result_preview = CASE WHEN ${v.has_result} THEN ${v.new_preview} ELSE tasks.result_preview END,
     result_truncated = CASE WHEN ${v.has_result} THEN ${v.new_truncated}
                             ELSE tasks.result_truncated END,
     result_artifact = coalesce(${v.new_artifact}::jsonb, tasks.result_artifact),
     progress = CASE WHEN ${v.has_progress} THEN ${v.new_progress}::jsonb ELSE tasks.progress END,
     input_required = NULL, error_code = ${v.new_error_code},
     error_message = ${v.new_error_message},
     poll_count = tasks.poll_count + 1, completed_at = now()`,
    guard: `(NOT ${v.has_guard} OR ${NOT_CANCELLED})`,
  };
}

/**
 * `finish`: the task ends (leases.md, "Scheduling after an attempt": the lease row goes, so no
 * due time and no lease; `completed_at = now()`). A row with `has_guard` (a poll's answer) is
 * not ended once a cancel request is pending.
 */
export const FINISH = fencedStatement(FINISH_COLUMNS, finishWrite);

/**
 * The end of a call that cannot be repeated, once the lease has expired: it still lands while
 * the row's token is ours, that is, nobody claimed the row since (leases.md, "A call's end"). Row
 * by row only.
 */
export const FINISH_IF_STILL_OURS_SQL = fencedWriteSql({
  ...finishWrite(parameterRefs(FINISH_COLUMNS)),
  tokenOnly: true,
});

/** What a renewal returns: whether a cancel is pending, and the task's reason for it. */
const RENEWAL_RETURNING = `task_leases.cancel_requested,
  (SELECT t.cancel_reason FROM tasks t WHERE t.id = task_leases.task_id) AS cancel_reason`;

/**
 * `renewWatchingCancel`: a held call's renewal (every lease/3; leases.md, "Timeouts"), returning
 * whether a cancel was requested: the worker then aborts the call and ends the task `cancelled`.
 * A handle write that keeps failing renews the same way while it retries (leases.md, "Remote
 * handles"). The only write that moves `lease_expires_at` forward. `delay_ms` is the lease
 * length. Fenced by the token alone: a lease that ran out in a database outage is renewed while
 * nobody claimed the row since, and the call goes on (leases.md, "A call's end").
 */
export const RENEW_WATCHING_CANCEL = fencedStatement(
  { delay_ms: 'float8' },
  (v) => ({
    lease: `lease_expires_at = now() + make_interval(secs => ${v.delay_ms} / 1000),
   next_attempt_at = now() + make_interval(secs => ${v.delay_ms} / 1000)`,
    tokenOnly: true,
  }),
  RENEWAL_RETURNING,
);
