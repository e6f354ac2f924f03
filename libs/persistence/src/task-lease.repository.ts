import { LeaseLostError, TaskSnapshot } from '@app/common';
import {
  ClaimRequest,
  ClaimedTask,
  RemoteHandle,
  RenewalOutcome,
  TaskLease,
  WriteOutcome,
} from './claimed-task';
import { jsonParam } from './database';
import {
  APPLY_POLL,
  FINISH,
  FINISH_IF_STILL_OURS_SQL,
  RENEW_WATCHING_CANCEL,
  SUBMITTED,
  SUBMITTED_COLUMNS,
  SUBMITTED_IF_STILL_OURS_SQL,
  SUBMIT_STARTED,
} from './sql/attempt-write.sql';
import {
  ANSWER_MARK_SQL,
  HANDLE_STORED_SQL,
  MARK_WORKING_SQL,
  RELEASE_AFTER_ERROR_SQL,
  RELEASE_AFTER_SQL,
  RELEASE_NOW_SQL,
  RELEASE_UNSENT_SUBMIT_SQL,
  SUBMIT_MARK_LANDED_SQL,
  UPDATE_PROGRESS_SQL,
} from './sql/lease-write.sql';
import { pollValues, submittedValues, terminalValues } from './attempt-values';
import { ClaimDatabase, ClaimOutcome, claimTasks } from './task-claim';
import { WriteBatchOptions } from './write-batcher';
import { FencedSend, WritePath } from './write-path';

/**
 * The claim and every write about a claimed task row: what the lease guards. Each write is
 * fenced (leases.md, "Fencing"), and no other class writes a leased row (pinned by
 * test/foundation/leases/fenced-writes.test.ts); fleet-wide statements that guard no lease live in
 * `FleetRepository`, worker liveness in `WorkerRepository`.
 *
 * Group commit (docs/leases.md, "Group commit") is decided when the repository is built: with
 * `writeBatch` (a window above 0, as the poller builds it) the submit-started, handle,
 * poll-result, terminal and held-call renewal writes of concurrent items go to the database
 * together, one fenced statement per kind and window, each row still fenced by its own token;
 * without, each is its row-by-row statement (write-path.ts says why not a batch of one).
 *
 * Methods that cannot be overtaken by a cancel throw {@link LeaseLostError} on a lost lease;
 * those that can return a {@link WriteOutcome}.
 */
export class TaskLeaseRepository {
  private readonly path: WritePath;
  private readonly submitsStarted: FencedSend<never, object>;
  private readonly handles: FencedSend<keyof typeof SUBMITTED_COLUMNS, object>;
  private readonly polls: FencedSend<(typeof APPLY_POLL.columns)[number], object>;
  private readonly terminals: FencedSend<(typeof FINISH.columns)[number], object>;
  private readonly renewals: FencedSend<'delay_ms', RenewalRow>;

  constructor(
    private readonly db: ClaimDatabase,
    writeBatch?: WriteBatchOptions,
  ) {
    this.path = new WritePath(db, writeBatch);
    this.submitsStarted = this.path.sender(SUBMIT_STARTED);
    this.handles = this.path.sender(SUBMITTED);
    this.polls = this.path.sender(APPLY_POLL);
    this.terminals = this.path.sender(FINISH);
    this.renewals = this.path.sender<'delay_ms', RenewalRow>(RENEW_WATCHING_CANCEL);
  }

  /** Sends every queued write now and waits for all in flight (graceful shutdown). */
  async flushWrites(): Promise<void> {
    await this.path.flush();
  }

  /**
   * Leases due rows, then reads the claimed tasks (task-claim.ts): the claim in due order, or by
   * fair share, within this worker's and the fleet's room.
   */
  async claim(request: ClaimRequest): Promise<ClaimedTask[]> {
    return (await this.claimBatch(request)).tasks;
  }

  /** {@link claim}, and whether a concurrent claim held rows it would have taken (the engine's). */
  claimBatch(request: ClaimRequest): Promise<ClaimOutcome> {
    return claimTasks(this.db, request);
  }

  /** Records, durably and before sending, that a submit (or a sync call) is about to go out. */
  async markSubmitStarted(lease: TaskLease): Promise<void> {
    if (!(await this.submitsStarted(lease, {}))) throw new LeaseLostError(lease.taskId);
  }

  /**
   * After `markSubmitStarted` failed with an unknown outcome (docs/leases.md, "Ambiguous
   * commits"): whether this claim's mark landed, given `submitAttempts` as the claim read it.
   * Throws {@link LeaseLostError} when the lease is gone.
   */
  async submitMarkLanded(lease: TaskLease, submitAttempts: number): Promise<boolean> {
    const rows = await this.db.query<{ landed: boolean }>(SUBMIT_MARK_LANDED_SQL, [
      lease.taskId,
      lease.token,
      submitAttempts,
    ]);
    if (rows.length === 0) throw new LeaseLostError(lease.taskId);
    return rows[0].landed;
  }

  /**
   * Whether the task row holds `handle` (its task ID, session and driver state): after a handle
   * write whose outcome was unknown, the row is the only witness that it landed (docs/leases.md,
   * "Ambiguous commits"). Upstream work whose handle is stored is never cancelled as orphaned.
   */
  async handleStored(taskId: string, handle: RemoteHandle): Promise<boolean> {
    const rows = await this.db.query(HANDLE_STORED_SQL, [
      taskId,
      handle.remoteTaskId,
      handle.sessionId ?? null,
      jsonParam(handle.driverState),
    ]);
    return rows.length > 0;
  }

  /**
   * Stores the remote handle and moves the task to `working` (or `input_required`). If a cancel
   * was requested meanwhile, the handle is still stored and the row is due now for the cancel
   * phase: no handle is ever dropped.
   */
  async recordSubmitted(
    lease: TaskLease,
    handle: RemoteHandle,
    snapshot: TaskSnapshot | undefined,
    nextDelayMs: number,
  ): Promise<void> {
    const landed = await this.handles(lease, submittedValues(handle, snapshot, nextDelayMs));
    if (!landed) throw new LeaseLostError(lease.taskId);
  }

  /**
   * The handle write once the lease has expired: it still lands if the row's token is ours,
   * that is, nobody claimed the row since (leases.md, "Remote handles"): without it the upstream
   * work is orphaned. Returns false when another claim took the row.
   */
  async recordSubmittedIfStillOurs(
    lease: TaskLease,
    handle: RemoteHandle,
    snapshot: TaskSnapshot | undefined,
    nextDelayMs: number,
  ): Promise<boolean> {
    const values = submittedValues(handle, snapshot, nextDelayMs);
    const params = SUBMITTED.columns.map((column) => values[column]);
    return (
      (await this.db.query(SUBMITTED_IF_STILL_OURS_SQL, [...fence(lease), ...params])).length > 0
    );
  }

  /** Sync-call: the call is on the wire; the task is `working` while this worker holds it. */
  async markWorking(lease: TaskLease): Promise<void> {
    await this.mustApply(lease, MARK_WORKING_SQL, []);
  }

  /** Stores progress of a held call without touching the schedule. */
  async updateProgress(lease: TaskLease, progress: TaskSnapshot['progress']): Promise<void> {
    await this.mustApply(lease, UPDATE_PROGRESS_SQL, [jsonParam(progress)]);
  }

  /**
   * Answers to a task's questions (docs/contracts.md, "Answering questions"): marked sent,
   * durably, right before they may reach the upstream; unmarked when the send provably did not
   * happen; marked delivered once the upstream acknowledged them (never sent again).
   */
  async markAnswers(
    lease: TaskLease,
    mark: 'sent' | 'unsent' | 'delivered',
    keys: readonly string[],
  ): Promise<void> {
    if (keys.length === 0) return;
    await this.mustApply(lease, ANSWER_MARK_SQL[mark], [keys]);
  }

  /**
   * Applies a poll's non-terminal snapshot. Not applied once a cancel is requested: the row
   * goes back to the cancel phase at once instead (leases.md, "Cancellation").
   */
  async applyPoll(
    lease: TaskLease,
    snapshot: TaskSnapshot,
    nextDelayMs: number,
  ): Promise<WriteOutcome> {
    const landed = await this.polls(lease, pollValues(snapshot, nextDelayMs));
    return landed ? 'applied' : this.releaseForCancel(lease);
  }

  /**
   * Ends the task in a terminal status. With `unlessCancelled` (a poll's answer), a pending
   * cancel request wins and the row goes to the cancel phase instead.
   */
  async finish(
    lease: TaskLease,
    snapshot: TaskSnapshot,
    unlessCancelled = false,
  ): Promise<WriteOutcome> {
    const landed = await this.terminals(lease, terminalValues(snapshot, unlessCancelled));
    if (landed) return 'applied';
    if (unlessCancelled) return this.releaseForCancel(lease);
    throw new LeaseLostError(lease.taskId);
  }

  /**
   * A transient error: count it, keep its text, and come back after the backoff delay, or at
   * once for the cancel phase when a cancel request is pending.
   */
  async releaseAfterError(lease: TaskLease, lastError: string, delayMs: number): Promise<void> {
    await this.mustApply(lease, RELEASE_AFTER_ERROR_SQL, [lastError, delayMs]);
  }

  /**
   * A submit that provably never left this worker (nothing was sent): counts the error like
   * `releaseAfterError` and also clears `submit_started_at`, so the next attempt is not mistaken
   * for a crash mid-submit (which would end the task `outcome_uncertain`).
   */
  async releaseUnsentSubmit(lease: TaskLease, lastError: string, delayMs: number): Promise<void> {
    await this.mustApply(lease, RELEASE_UNSENT_SUBMIT_SQL, [lastError, delayMs]);
  }

  /**
   * Gives a claimed row back, due after `delayMs`, without counting an error: a row claimed for
   * a server that filled up meanwhile.
   */
  async releaseAfter(lease: TaskLease, delayMs: number): Promise<void> {
    await this.mustApply(lease, RELEASE_AFTER_SQL, [delayMs]);
  }

  /** Gives the row back, due now, without counting an error (graceful shutdown). */
  async release(lease: TaskLease): Promise<void> {
    await this.mustApply(lease, RELEASE_NOW_SQL, []);
  }

  /**
   * Renews a held call's lease and reports a pending cancel request in the same statement, so a
   * sync-call worker learns of a cancel within lease/3 even if the NOTIFY was lost. Also keeps the
   * claim of a submit whose handle write keeps failing (leases.md, "Remote handles").
   */
  async renewWatchingCancel(lease: TaskLease, leaseMs: number): Promise<RenewalOutcome> {
    const row = await this.renewals(lease, { delay_ms: leaseMs });
    if (row === undefined) throw new LeaseLostError(lease.taskId);
    return renewalOutcome(row);
  }

  /**
   * The end of a call that cannot be repeated once the lease has expired (docs/leases.md, "A
   * call's end"): lands while the row's token is ours, nobody having claimed it since. False when
   * another claim took the row.
   */
  async finishIfStillOurs(lease: TaskLease, snapshot: TaskSnapshot): Promise<boolean> {
    const values = terminalValues(snapshot, false);
    const params = FINISH.columns.map((column) => values[column]);
    return (await this.db.query(FINISH_IF_STILL_OURS_SQL, [...fence(lease), ...params])).length > 0;
  }

  /**
   * Whether the task ended with `status` under claim number `claimCount`: a terminal write
   * stores its claim's number, so this tells an end that landed but whose reply was lost from
   * one that never did (docs/leases.md, "A call's end").
   */
  async endedUnder(taskId: string, claimCount: number, status: string): Promise<boolean> {
    const sql = `SELECT 1 FROM tasks WHERE id = $1 AND claim_count = $2 AND status = $3`;
    return (await this.db.query(sql, [taskId, claimCount, status])).length > 0;
  }

  private async mustApply(lease: TaskLease, sql: string, params: unknown[]): Promise<void> {
    const rows = await this.db.query(sql, [lease.taskId, lease.token, ...params]);
    if (rows.length === 0) throw new LeaseLostError(lease.taskId);
  }

  /** After a guarded write missed: a pending cancel, or else the lease was lost. */
  private async releaseForCancel(lease: TaskLease): Promise<WriteOutcome> {
    const released = await this.db.query(RELEASE_NOW_SQL, [lease.taskId, lease.token]);
    return released.length > 0 ? 'cancel_pending' : 'lease_lost';
  }
}

/** A row-by-row statement's first two parameters: the task and the token. */
function fence(lease: TaskLease): [string, string] {
  return [lease.taskId, lease.token];
}

/** What a renewal returns about its row. */
interface RenewalRow {
  cancel_requested: boolean;
  cancel_reason: string | null;
}

/** A renewed row's outcome: renewed, or a cancel to act on (a deadline's or a consumer's). */
function renewalOutcome(row: RenewalRow): RenewalOutcome {
  if (!row.cancel_requested) return 'renewed';
  return row.cancel_reason === 'deadline' ? 'deadline_cancel' : 'cancel_requested';
}
