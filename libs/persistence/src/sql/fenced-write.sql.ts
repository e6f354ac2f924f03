/**
 * The fencing rule of leases.md ("Fencing"), in the one place it is written: every write about a
 * claimed task lands only while the claim's token is current and its lease unexpired, judged by
 * the database clock. Zero rows means the lease was lost; the caller discards its result and
 * never retries the write. `TaskLeaseRepository` is the only caller (pinned by
 * test/foundation/leases/fenced-writes.test.ts).
 *
 * The lease lives in `task_leases` (docs/leases.md, "The lease table"), the task in `tasks`. A
 * write takes the lease row first, by the fence: it updates the lease row, deletes it (the task
 * ends), or only locks it, and then writes the task row in the same statement. Every writer of an
 * active task takes the lease row before the task row, so two writers of one task queue on the
 * lease row and never lock the two rows in opposite orders.
 *
 * `$1` is the task ID and `$2` the lease token; callers number their own parameters from $3.
 */

/** The lease half of the fence, shared by the row-by-row and the batched form. */
export const LEASE_LIVE = 'task_leases.lease_expires_at > now()';

/** Clears the lease: the row is released to whoever claims it at its due time. */
export const CLEAR_LEASE = 'lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL';

/** No cancel request is pending on the lease row (a guard on writes a cancel overtakes). */
export const NOT_CANCELLED = 'NOT task_leases.cancel_requested';

/** One fenced write: what it does to the lease row and to the task row. */
export interface FencedWrite {
  /** The lease row's SET list; absent (and not `ends`): the lease row is only locked. */
  lease?: string;
  /** The task ends: its lease row is deleted, and its claim count carried into the task row. */
  ends?: boolean;
  /** The task row's SET list; absent: only the lease row is written. */
  task?: string;
  /** A condition on the lease row whose failure is told apart from a lost lease by the caller. */
  guard?: string;
  /** Fenced by the token alone, not the expiry: the handle write of "Remote handles". */
  tokenOnly?: boolean;
}

/** Single-row form: `WHERE` of the lease row, by `$1` and `$2`. */
function singleFence(write: FencedWrite): string {
  const live = write.tokenOnly ? '' : ` AND ${LEASE_LIVE}`;
  const guard = write.guard ? ` AND ${write.guard}` : '';
  return `task_leases.task_id = $1 AND task_leases.lease_token = $2${live}${guard}`;
}

/**
 * The write as one statement returning the task ID when the fence (and guard) held. The lease
 * row is taken in a CTE (`u`); the task row is written from it.
 */
export function fencedWriteSql(write: FencedWrite): string {
  const fence = singleFence(write);
  if (write.task === undefined) {
    if (write.lease === undefined)
      throw new Error('fencedWriteSql: a lease-only write needs a SET list');
    return `UPDATE task_leases SET ${write.lease} WHERE ${fence} RETURNING task_leases.task_id AS id`;
  }
  const lease = write.ends
    ? `DELETE FROM task_leases WHERE ${fence}
           RETURNING task_leases.task_id AS id, task_leases.claim_count`
    : write.lease === undefined
      ? `SELECT task_leases.task_id AS id FROM task_leases WHERE ${fence} FOR UPDATE`
      : `UPDATE task_leases SET ${write.lease} WHERE ${fence} RETURNING task_leases.task_id AS id`;
  const claims = write.ends ? ', claim_count = u.claim_count' : '';
  return `WITH u AS (${lease})
UPDATE tasks SET ${write.task}${claims} FROM u WHERE tasks.id = u.id RETURNING tasks.id`;
}

/**
 * Group commit (leases.md, "Group commit"): many claimed tasks written by ONE statement, each
 * still fenced by its own token and lease (database clock). `$1` is a JSON array of the rows'
 * values (`jsonb_to_recordset`), one object per row with `id` and `token`; a row missing from
 * RETURNING failed its fence (or its guard) exactly as its row-by-row write would have. The
 * batch's column names all start `new_`, `has_` or `delay_` so none can mean a task or lease
 * column. The values are `u` in the lease row's statement and the CTE that carries them on is
 * `u` too, so one SET list over `u.<name>` reads them in either. Returns each landed row's ID
 * and token.
 */
function batchedWriteSql(write: FencedWrite, columns: string, returning = ''): string {
  const values = `jsonb_to_recordset($1::jsonb) AS u(id text, token uuid${columns ? `, ${columns}` : ''})`;
  const fence = `task_leases.task_id = u.id AND task_leases.lease_token = u.token AND ${LEASE_LIVE}${
    write.guard ? ` AND ${write.guard}` : ''
  }`;
  // The batch's lease rows are locked first, in task ID order (`l`), whatever order the items
  // arrived in and whatever join the planner picks: thread deletion and every other writer of
  // several tasks lock lease rows in ID order too, and two statements that lock an overlapping
  // set in different orders deadlock (docs/leases.md, "The lease table"). The write then joins
  // what `l` locked, its fence checked again on the locked row.
  const locked = `l AS (SELECT u.* FROM task_leases JOIN ${values} ON ${fence}
   ORDER BY task_leases.task_id FOR UPDATE OF task_leases)`;
  const extra = returning ? `, ${returning}` : '';
  if (write.task === undefined) {
    if (write.lease === undefined)
      throw new Error('batchedWriteSql: a lease-only write needs a SET list');
    return `WITH ${locked}
UPDATE task_leases SET ${write.lease} FROM l AS u WHERE ${fence}
RETURNING task_leases.task_id AS id, u.token::text AS token${extra}`;
  }
  const lease = write.ends
    ? `DELETE FROM task_leases USING l AS u WHERE ${fence}
           RETURNING u.*, task_leases.claim_count AS ended_claims`
    : write.lease === undefined
      ? `SELECT * FROM l`
      : `UPDATE task_leases SET ${write.lease} FROM l AS u WHERE ${fence} RETURNING u.*`;
  const claims = write.ends ? ', claim_count = u.ended_claims' : '';
  return `WITH ${locked}, u AS (${lease})
UPDATE tasks SET ${write.task}${claims} FROM u WHERE tasks.id = u.id
RETURNING tasks.id, u.token::text AS token${extra}`;
}

/**
 * A terminal write's task columns (leases.md, "Scheduling after an attempt": the lease row goes,
 * so no due time and no lease; `completed_at = now()`), one SET list for `finish` and
 * `finishMany`. Parameters `$3…$12`: status, has-result, result, preview, truncated, artifact,
 * has-progress, progress, error code, error message (`terminalParams` in
 * task-lease.repository.ts builds them in this order).
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
       poll_count = tasks.poll_count + 1, completed_at = now()`;
}

/** `finish` of one row; `guarded`: not once a cancel request is pending (a poll's answer). */
function finishSql(guarded: boolean): string {
  return fencedWriteSql({
    ends: true,
    task: TERMINAL_SET,
    guard: guarded ? NOT_CANCELLED : undefined,
  });
}

/** `finish` of one row, whatever is pending. */
export const FINISH_SQL = finishSql(false);

/** `finish` of one row unless a cancel request is pending (a poll's answer). */
export const FINISH_UNLESS_CANCELLED_SQL = finishSql(true);

/**
 * `markSubmitStarted`: the durable mark that a submit is about to go out, written before
 * anything is sent. The lease row is only locked.
 */
export const SUBMIT_STARTED_SQL = fencedWriteSql({
  task: 'submit_started_at = now(), submit_attempts = tasks.submit_attempts + 1',
});

/** `markSubmitStarted` for a batch (no columns beyond `id` and `token`). */
export const SUBMIT_STARTED_BATCH_SQL = batchedWriteSql(
  { task: 'submit_started_at = now(), submit_attempts = tasks.submit_attempts + 1' },
  '',
);

/**
 * The eight values of a handle write, in `SUBMITTED_*`'s parameter order: status, remote task
 * ID, remote session ID, protocol version, driver state, pinned worker, delay (ms), questions.
 */
type SubmittedRefs = [string, string, string, string, string, string, string, string];

/**
 * Stores a remote handle after a submit and moves the task to `working` (or `input_required`),
 * due after the delay, or at once when a cancel is pending (the cancel phase takes the handle).
 * The pinned worker is the claim's rule, so the lease row keeps it too.
 */
function submittedWrite(v: SubmittedRefs, tokenOnly = false): FencedWrite {
  const [status, remoteTaskId, sessionId, protocolVersion, driverState, pinned, delay, questions] =
    v;
  return {
    lease: `${CLEAR_LEASE}, queued = false, pinned_worker_id = ${pinned},
     next_attempt_at = ${delayUnlessCancelled(`${delay}::float8`)}`,
    task: `status = ${status}, remote_task_id = ${remoteTaskId}, remote_session_id = ${sessionId},
     remote_protocol_version = ${protocolVersion}, driver_state = ${driverState}::jsonb,
     pinned_worker_id = ${pinned}, submitted_at = now(), last_success_at = now(),
     consecutive_errors = 0, last_error = NULL, input_required = ${questions}::jsonb`,
    tokenOnly,
  };
}

const SUBMITTED_PARAMS = Array.from({ length: 8 }, (_, i) => `$${i + 3}`) as SubmittedRefs;

/** The handle write over parameters `$3…$10` (`submittedParams` builds them). */
export const SUBMITTED_SQL = fencedWriteSql(submittedWrite(SUBMITTED_PARAMS));

/**
 * The handle write once the lease has expired: it still lands while the row's token is ours,
 * that is, nobody claimed the row since (leases.md, "Remote handles").
 */
export const SUBMITTED_IF_STILL_OURS_SQL = fencedWriteSql(submittedWrite(SUBMITTED_PARAMS, true));

/** `recordSubmitted` for a batch, each row with its own handle (its columns start `new_`). */
export const SUBMITTED_BATCH_SQL = batchedWriteSql(
  submittedWrite([
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

/** Sync-call: the call is on the wire; the task is `working` while this worker holds it. */
export const MARK_WORKING_SQL = fencedWriteSql({
  lease: 'queued = false',
  task: `status = 'working', submitted_at = coalesce(tasks.submitted_at, now())`,
});

/** Stores progress of a held call without touching the schedule. */
export const UPDATE_PROGRESS_SQL = fencedWriteSql({ task: 'progress = $3::jsonb' });

/**
 * A poll's non-terminal answer applied, due again after the delay; not once a cancel is
 * requested. Answers the API stored while this lease was held (`answers_waiting`) make the row
 * due at once instead: the attempt did not have them (docs/contracts.md, "Answering questions").
 */
function pollWrite(v: {
  status: string;
  hasProgress: string;
  progress: string;
  questions: string;
  delay: string;
}): FencedWrite {
  return {
    lease: `${CLEAR_LEASE}, answers_waiting = false,
   next_attempt_at = CASE WHEN task_leases.answers_waiting THEN now()
                          ELSE now() + make_interval(secs => ${v.delay}::float8 / 1000) END`,
    task: `status = ${v.status},
   progress = CASE WHEN ${v.hasProgress}::boolean THEN ${v.progress}::jsonb ELSE tasks.progress END,
   input_required = ${v.questions}::jsonb, consecutive_errors = 0, last_error = NULL,
   last_success_at = now(), poll_count = tasks.poll_count + 1`,
    guard: NOT_CANCELLED,
  };
}

/** `applyPoll`: `$3` status, `$4` has-progress, `$5` progress, `$6` questions, `$7` delay. */
export const APPLY_POLL_SQL = fencedWriteSql(
  pollWrite({ status: '$3', hasProgress: '$4', progress: '$5', questions: '$6', delay: '$7' }),
);

/**
 * `applyPoll` for a batch: per row `new_status`, `has_progress`, `new_progress` (JSON text),
 * `new_input_required` (JSON text), `delay_ms`; not applied once a cancel is requested.
 */
export const APPLY_POLL_BATCH_SQL = batchedWriteSql(
  pollWrite({
    status: 'u.new_status',
    hasProgress: 'u.has_progress',
    progress: 'u.new_progress',
    questions: 'u.new_input_required',
    delay: 'u.delay_ms',
  }),
  `new_status text, has_progress boolean, new_progress text, new_input_required text,
   delay_ms float8`,
);

/**
 * `finish` for a batch, each row with its own snapshot (the terminal SET list over the batch's
 * columns); a row with `has_guard` is not ended once a cancel is requested (a poll's answer).
 */
export const FINISH_BATCH_SQL = batchedWriteSql(
  {
    ends: true,
    task: terminalSet([
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
    guard: `(NOT u.has_guard OR ${NOT_CANCELLED})`,
  },
  `new_status text, has_result boolean, new_result text, new_preview text, new_truncated boolean,
   new_artifact text, has_progress boolean, new_progress text, new_error_code text,
   new_error_message text, has_guard boolean`,
);

/**
 * Sets `field` (an ISO time from the database clock) on the stored answers of the keys in `$3`,
 * or removes it; answers added meanwhile by the API are kept (the row is re-read under its lock).
 */
function answerMarkSql(field: 'sent_at' | 'delivered_at', remove = false): string {
  const value = remove
    ? `tasks.input_responses -> k - '${field}'`
    : `tasks.input_responses -> k || jsonb_build_object('${field}', now())`;
  return fencedWriteSql({
    task: `input_responses = tasks.input_responses || coalesce(
    (SELECT jsonb_object_agg(k, ${value}) FROM unnest($3::text[]) AS k
      WHERE tasks.input_responses ? k), '{}'::jsonb)`,
  });
}

/** The answer marks of `markAnswers`, by mark. */
export const ANSWER_MARK_SQL = {
  sent: answerMarkSql('sent_at'),
  unsent: answerMarkSql('sent_at', true),
  delivered: answerMarkSql('delivered_at'),
} as const;

/**
 * A transient error: count it, keep its text (`$3`), and come back after the backoff delay
 * (`$4` ms), or at once for the cancel phase when a cancel request is pending. With
 * `unsentSubmit` the submit provably never left this worker, so its mark is cleared too and the
 * next attempt is not taken for a crash mid-submit (which would end it `outcome_uncertain`).
 */
function releaseAfterErrorSql(unsentSubmit: boolean): string {
  return fencedWriteSql({
    lease: `${CLEAR_LEASE}, next_attempt_at = ${afterMsUnlessCancelled(4)}`,
    task: `${unsentSubmit ? 'submit_started_at = NULL, ' : ''}consecutive_errors =
     tasks.consecutive_errors + 1, last_error = $3`,
  });
}

/** `releaseAfterError`. */
export const RELEASE_AFTER_ERROR_SQL = releaseAfterErrorSql(false);

/** `releaseUnsentSubmit`: also clears the submit's mark. */
export const RELEASE_UNSENT_SUBMIT_SQL = releaseAfterErrorSql(true);

/**
 * Gives a claimed row back, due after `$3` ms (or at once when a cancel is pending), without
 * counting an error: a row claimed for a server that filled up meanwhile.
 */
export const RELEASE_AFTER_SQL = fencedWriteSql({
  lease: `${CLEAR_LEASE}, next_attempt_at = ${afterMsUnlessCancelled(3)}`,
});

/**
 * Gives the row back, due now, without counting an error: a graceful shutdown, or a late poll
 * after a cancel request (the cancel phase takes it at once).
 */
export const RELEASE_NOW_SQL = fencedWriteSql({
  lease: `${CLEAR_LEASE}, next_attempt_at = now()`,
});

/** `now() + $n ms`, or now when a cancel request is pending (leases.md, "Cancellation"). */
function afterMsUnlessCancelled(param: number): string {
  return delayUnlessCancelled(`$${param}::float8`);
}

/** `now() + ms` (an SQL expression) for the lease row, or now when a cancel is pending. */
function delayUnlessCancelled(ms: string): string {
  return `CASE WHEN task_leases.cancel_requested THEN now()
    ELSE now() + make_interval(secs => ${ms} / 1000) END`;
}

/** What a renewal returns: whether a cancel is pending, and the task's reason for it. */
const RENEWAL_RETURNING = `task_leases.cancel_requested,
  (SELECT t.cancel_reason FROM tasks t WHERE t.id = task_leases.task_id) AS cancel_reason`;

/**
 * A held call's renewal (every lease/3; leases.md, "Timeouts"), fenced like every write,
 * returning whether a cancel was requested: the worker then aborts the call and ends the task
 * `cancelled`. The only write that moves `lease_expires_at` forward. `$3` the lease length (ms).
 */
export const RENEW_WATCHING_CANCEL_SQL = `
UPDATE task_leases
   SET lease_expires_at = now() + make_interval(secs => $3::float8 / 1000),
       next_attempt_at  = now() + make_interval(secs => $3::float8 / 1000)
 WHERE ${singleFence({})}
RETURNING ${RENEWAL_RETURNING}`;

/**
 * `RENEW_WATCHING_CANCEL_SQL` for a batch of held calls: per row `delay_ms`, the lease length;
 * returns, per renewed row, whether a cancel was requested.
 */
export const RENEW_WATCHING_CANCEL_BATCH_SQL = batchedWriteSql(
  {
    lease: `lease_expires_at = now() + make_interval(secs => u.delay_ms / 1000),
   next_attempt_at = now() + make_interval(secs => u.delay_ms / 1000)`,
  },
  'delay_ms float8',
  RENEWAL_RETURNING,
);

/**
 * Re-reads after a write whose outcome is unknown (docs/leases.md, "Ambiguous commits"): the
 * connection broke after the statement was sent, so it may have committed. Read under the same
 * fence, the submit-started mark tells whether it landed: it counts `submit_attempts` up, and
 * nothing but a fenced write of this claim can change the count while the claim holds the lease,
 * so a count above the one the claim read (`$3`) is this attempt's mark. No row: the lease is gone.
 */
export const SUBMIT_MARK_LANDED_SQL = `SELECT tasks.submit_attempts > $3 AS landed
  FROM task_leases JOIN tasks ON tasks.id = task_leases.task_id
 WHERE ${singleFence({})}`;

/**
 * Whether the task row holds this remote handle (`$2` task ID, `$3` session, `$4` driver state):
 * the handle write clears the lease token, so a retry after a lost reply misses its fence, and
 * only the row itself can say that the first try landed. Not fenced: it decides whether upstream
 * work is cancelled as orphaned, whoever holds the row now.
 */
export const HANDLE_STORED_SQL = `SELECT 1 FROM tasks
 WHERE id = $1 AND remote_task_id = $2 AND remote_session_id IS NOT DISTINCT FROM $3
   AND driver_state IS NOT DISTINCT FROM $4::jsonb`;
