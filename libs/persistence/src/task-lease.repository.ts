import { LeaseLostError, TaskSnapshot, TaskStatus } from '@app/common';
import {
  BatchOutcome,
  ClaimRequest,
  ClaimRow,
  ClaimedTask,
  RemoteHandle,
  RenewalOutcome,
  TaskLease,
  WriteOutcome,
  toClaimedTask,
} from './claimed-task';
import { Database, Queryable, jsonParam } from './database';
import {
  CLAIM_SQL,
  FAIR_CLAIM_SQL,
  FLEET_LIVE_SQL,
  FLEET_LOCK_SQL,
  TASK_ROWS_BY_ID_SQL,
} from './sql/claim.sql';
import {
  APPLY_POLL_BATCH_SQL,
  APPLY_POLL_SQL,
  FINISH_BATCH_SQL,
  MARK_WORKING_SQL,
  RELEASE_AFTER_SQL,
  RELEASE_NOW_SQL,
  RENEW_WATCHING_CANCEL_BATCH_SQL,
  RENEW_WATCHING_CANCEL_SQL,
  SUBMITTED_BATCH_SQL,
  SUBMITTED_IF_STILL_OURS_SQL,
  SUBMITTED_SQL,
  SUBMIT_MARK_LANDED_SQL,
  SUBMIT_STARTED_BATCH_SQL,
  SUBMIT_STARTED_SQL,
  UPDATE_PROGRESS_SQL,
  ANSWER_MARK_SQL,
  FINISH_SQL,
  FINISH_UNLESS_CANCELLED_SQL,
  HANDLE_STORED_SQL,
  RELEASE_AFTER_ERROR_SQL,
  RELEASE_UNSENT_SUBMIT_SQL,
} from './sql/fenced-write.sql';
import { FINISH_MANY_SQL } from './sql/finish-many.sql';
import { storableJson } from './storable-text';
import { WriteBatchOptions, WriteBatcher } from './write-batcher';

/** A poll's non-terminal write, queued for group commit. */
interface PollWrite {
  lease: TaskLease;
  snapshot: TaskSnapshot;
  nextDelayMs: number;
}

/** A held call's renewal, queued for group commit. */
interface Renewal {
  lease: TaskLease;
  leaseMs: number;
}

/** A submit's handle write, queued for group commit. */
interface HandleWrite {
  lease: TaskLease;
  handle: RemoteHandle;
  snapshot: TaskSnapshot | undefined;
  nextDelayMs: number;
}

/** A terminal write, queued for group commit; `guarded`: not applied once a cancel is pending. */
interface TerminalWrite {
  lease: TaskLease;
  snapshot: TaskSnapshot;
  guarded: boolean;
}

/**
 * The claim and every write about a claimed task row: what the lease guards. Each write is
 * fenced (leases.md, "Fencing"), and no other class writes a leased row (pinned by
 * test/foundation/leases/fenced-writes.test.ts); fleet-wide statements that guard no lease live in
 * `FleetRepository`, worker liveness in `WorkerRepository`.
 *
 * Methods that cannot be overtaken by a cancel throw {@link LeaseLostError} on a lost lease;
 * those that can return a {@link WriteOutcome}.
 */
export class TaskLeaseRepository {
  private polls: WriteBatcher<PollWrite, boolean> | undefined;
  private terminals: WriteBatcher<TerminalWrite, boolean> | undefined;
  /** Per renewal: its outcome, or undefined when the lease was lost. */
  private renewals: WriteBatcher<Renewal, RenewalOutcome | undefined> | undefined;
  private submitsStarted: WriteBatcher<TaskLease, boolean> | undefined;
  private handles: WriteBatcher<HandleWrite, boolean> | undefined;

  constructor(private readonly db: Queryable) {}

  /**
   * Group commit (docs/leases.md, "Group commit"): from now on the submit-started, handle,
   * poll-result, terminal and held-call renewal writes of concurrent items go to the database
   * together, one fenced statement per kind and window, each row still fenced by its own token.
   * A window of 0 keeps one statement per write.
   */
  batchWrites(options: WriteBatchOptions): void {
    if (options.windowMs <= 0) {
      this.polls = this.terminals = this.renewals = undefined;
      this.submitsStarted = this.handles = undefined;
      return;
    }
    this.renewals = new WriteBatcher((items) => this.sendRenewals(items), options);
    this.polls = new WriteBatcher((items) => this.sendPolls(items), options);
    this.terminals = new WriteBatcher((items) => this.sendTerminals(items), options);
    this.submitsStarted = new WriteBatcher(
      (leases) =>
        this.sendBatch(
          SUBMIT_STARTED_BATCH_SQL,
          leases.map((lease) => ({ lease })),
          leases.map((lease) => ({ id: lease.taskId, token: lease.token })),
        ),
      options,
    );
    this.handles = new WriteBatcher((items) => this.sendHandles(items), options);
  }

  /** Sends every queued write now and waits for all in flight (graceful shutdown). */
  async flushWrites(): Promise<void> {
    await Promise.all([
      this.polls?.flush(),
      this.terminals?.flush(),
      this.renewals?.flush(),
      this.submitsStarted?.flush(),
      this.handles?.flush(),
    ]);
  }

  /**
   * Leases due rows (claim.sql.ts), then reads the claimed tasks by ID in a statement of their
   * own, after the claim committed (TASK_ROWS_BY_ID_SQL says why).
   */
  async claim(request: ClaimRequest): Promise<ClaimedTask[]> {
    if (request.limit <= 0) return [];
    // Before any statement of the claim: its now() (a transaction's start) is never earlier, so
    // the lease's end counted from here is never late (docs/leases.md, "Attempt deadlines").
    const sentAtMs = Date.now();
    const leased = await this.leaseDueRows(request);
    if (leased.length === 0) return [];
    const rows = await this.db.query(TASK_ROWS_BY_ID_SQL, [leased.map((row) => row.id)]);
    const byId = new Map(rows.map((row) => [row.id as string, row]));
    // A task row is missing only if the task was deleted since, which takes its lease row too.
    return leased.flatMap((lease) => {
      const row = byId.get(lease.id);
      return row ? [toClaimedTask(row, lease, sentAtMs)] : [];
    });
  }

  private async leaseDueRows(request: ClaimRequest): Promise<ClaimRow[]> {
    const room = request.serverRoom ?? new Map<string, number>();
    const caps = [...(request.fleetCaps ?? new Map<string, number>())].filter(
      ([server]) => !request.excludeServers?.includes(server) && (room.get(server) ?? 1) > 0,
    );
    if (caps.length === 0 || !(this.db instanceof Database)) {
      return this.leaseRows(this.db, request, room);
    }
    // One claimer at a time counts a capped server's live leases and claims: two claims that
    // started together would otherwise both see the same free room (docs/leases.md, "Fleet-wide
    // caps"). Each statement in the transaction has its own snapshot, taken after the lock.
    return this.db.transaction(async (tx) => {
      const servers = caps.map(([server]) => server);
      await tx.query(FLEET_LOCK_SQL, [servers]);
      const live = await tx.query<{ server: string; live: number }>(FLEET_LIVE_SQL, [servers]);
      const inUse = new Map(live.map((row) => [row.server, row.live]));
      const tightened = new Map(room);
      for (const [server, max] of caps) {
        const fleetFree = Math.max(0, max - (inUse.get(server) ?? 0));
        tightened.set(server, Math.min(room.get(server) ?? fleetFree, fleetFree));
      }
      return this.leaseRows(tx, request, tightened);
    });
  }

  private async leaseRows(
    db: Queryable,
    request: ClaimRequest,
    room: ReadonlyMap<string, number>,
  ): Promise<ClaimRow[]> {
    // A server with no room is skipped by the scan itself, so its rows never crowd the candidates.
    const full = [...room].filter(([, free]) => free <= 0).map(([server]) => server);
    const params: unknown[] = [
      request.workerId,
      request.limit,
      request.phases,
      request.leaseMs,
      request.deadWorkerAfterMs,
      [...new Set([...(request.excludeServers ?? []), ...full])],
      [...room.keys()],
      [...room.values()],
    ];
    const fair = request.fairShare;
    if (fair) params.push([...fair.weights.keys()], [...fair.weights.values()]);
    return fair
      ? db.query<ClaimRow>(FAIR_CLAIM_SQL, params, 'mcp_tasks_claim_fair')
      : db.query<ClaimRow>(CLAIM_SQL, params, 'mcp_tasks_claim');
  }

  /** Records, durably and before sending, that a submit (or a sync call) is about to go out. */
  async markSubmitStarted(lease: TaskLease): Promise<void> {
    if (this.submitsStarted) {
      if (!(await this.submitsStarted.submit(lease))) throw new LeaseLostError(lease.taskId);
      return;
    }
    await this.mustApply(lease, SUBMIT_STARTED_SQL, []);
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
    if (this.handles) {
      const landed = await this.handles.submit({ lease, handle, snapshot, nextDelayMs });
      if (!landed) throw new LeaseLostError(lease.taskId);
      return;
    }
    await this.mustApply(lease, SUBMITTED_SQL, submittedParams(handle, snapshot, nextDelayMs));
  }

  /**
   * The handle write once the lease has expired: it still lands if the row's token is ours,
   * that is, nobody claimed the row since (leases.md, "Remote handles"). The one write that is
   * not fenced by the expiry: without it the upstream work is orphaned. Returns false when
   * another claim took the row.
   */
  async recordSubmittedIfStillOurs(
    lease: TaskLease,
    handle: RemoteHandle,
    snapshot: TaskSnapshot | undefined,
    nextDelayMs: number,
  ): Promise<boolean> {
    const params = submittedParams(handle, snapshot, nextDelayMs);
    const rows = await this.db.query(SUBMITTED_IF_STILL_OURS_SQL, [
      lease.taskId,
      lease.token,
      ...params,
    ]);
    return rows.length > 0;
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
    if (this.polls) {
      const landed = await this.polls.submit({ lease, snapshot, nextDelayMs });
      return landed ? 'applied' : this.releaseForCancel(lease);
    }
    return this.applyUnlessCancelled(lease, APPLY_POLL_SQL, [
      snapshot.status,
      snapshot.progress !== undefined,
      jsonParam(snapshot.progress),
      jsonParam(snapshot.status === TaskStatus.InputRequired ? snapshot.inputRequired : null),
      nextDelayMs,
    ]);
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
    if (this.terminals) {
      const landed = await this.terminals.submit({ lease, snapshot, guarded: unlessCancelled });
      if (landed) return 'applied';
      if (unlessCancelled) return this.releaseForCancel(lease);
      throw new LeaseLostError(lease.taskId);
    }
    const sql = unlessCancelled ? FINISH_UNLESS_CANCELLED_SQL : FINISH_SQL;
    const params = terminalParams(snapshot);
    if (unlessCancelled) return this.applyUnlessCancelled(lease, sql, params);
    await this.mustApply(lease, sql, params);
    return 'applied';
  }

  /**
   * Ends every row of `leases` with `snapshot` in one statement, like `finish(lease, snapshot)`
   * for each (docs/benchmarks.md: per-row commits cap throughput). Rows whose lease was lost
   * are returned in `lost` and left untouched; never retry them.
   */
  async finishMany(leases: readonly TaskLease[], snapshot: TaskSnapshot): Promise<BatchOutcome> {
    if (leases.length === 0) return { applied: [], lost: [] };
    const rows = await this.db.query<{ id: string }>(
      FINISH_MANY_SQL,
      [
        leases.map((lease) => lease.taskId),
        leases.map((lease) => lease.token),
        ...terminalParams(snapshot),
      ],
      // No statement name: a batch is planned for its own size (see `sendBatch`).
    );
    const applied = rows.map((row) => row.id);
    const landed = new Set(applied);
    return { applied, lost: leases.filter((lease) => !landed.has(lease.taskId)) };
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
   * sync-call worker learns of a cancel within lease/3 even if the NOTIFY was lost.
   */
  async renewWatchingCancel(lease: TaskLease, leaseMs: number): Promise<RenewalOutcome> {
    if (this.renewals) {
      const outcome = await this.renewals.submit({ lease, leaseMs });
      if (outcome === undefined) throw new LeaseLostError(lease.taskId);
      return outcome;
    }
    const rows = await this.db.query<RenewalRow>(RENEW_WATCHING_CANCEL_SQL, [
      lease.taskId,
      lease.token,
      leaseMs,
    ]);
    if (rows.length === 0) throw new LeaseLostError(lease.taskId);
    return renewalOutcome(rows[0]);
  }

  private async mustApply(lease: TaskLease, sql: string, params: unknown[]): Promise<void> {
    const rows = await this.db.query(sql, [lease.taskId, lease.token, ...params]);
    if (rows.length === 0) throw new LeaseLostError(lease.taskId);
  }

  private async applyUnlessCancelled(
    lease: TaskLease,
    sql: string,
    params: unknown[],
  ): Promise<WriteOutcome> {
    const rows = await this.db.query(sql, [lease.taskId, lease.token, ...params]);
    if (rows.length > 0) return 'applied';
    return this.releaseForCancel(lease);
  }

  /** After a guarded write missed: a pending cancel, or else the lease was lost. */
  private async releaseForCancel(lease: TaskLease): Promise<WriteOutcome> {
    const released = await this.db.query(RELEASE_NOW_SQL, [lease.taskId, lease.token]);
    return released.length > 0 ? 'cancel_pending' : 'lease_lost';
  }

  private async sendPolls(items: PollWrite[]): Promise<boolean[]> {
    const rows = items.map(({ lease, snapshot, nextDelayMs }) => ({
      id: lease.taskId,
      token: lease.token,
      new_status: snapshot.status,
      has_progress: snapshot.progress !== undefined,
      new_progress: jsonParam(snapshot.progress),
      new_input_required: jsonParam(
        snapshot.status === TaskStatus.InputRequired ? snapshot.inputRequired : null,
      ),
      delay_ms: nextDelayMs,
    }));
    return this.sendBatch(APPLY_POLL_BATCH_SQL, items, rows);
  }

  private async sendHandles(items: HandleWrite[]): Promise<boolean[]> {
    const rows = items.map(({ lease, handle, snapshot, nextDelayMs }) => {
      const v = submittedParams(handle, snapshot, nextDelayMs);
      return {
        id: lease.taskId,
        token: lease.token,
        new_status: v[0],
        new_remote_task_id: v[1],
        new_remote_session_id: v[2],
        new_protocol_version: v[3],
        new_driver_state: v[4],
        new_pinned_worker_id: v[5],
        delay_ms: v[6],
        new_input_required: v[7],
      };
    });
    return this.sendBatch(SUBMITTED_BATCH_SQL, items, rows);
  }

  private async sendTerminals(items: TerminalWrite[]): Promise<boolean[]> {
    const rows = items.map(({ lease, snapshot, guarded }) => {
      const v = terminalParams(snapshot);
      return {
        id: lease.taskId,
        token: lease.token,
        new_status: v[0],
        has_result: v[1],
        new_result: v[2],
        new_preview: v[3],
        new_truncated: v[4],
        new_artifact: v[5],
        has_progress: v[6],
        new_progress: v[7],
        new_error_code: v[8],
        new_error_message: v[9],
        has_guard: guarded,
      };
    });
    return this.sendBatch(FINISH_BATCH_SQL, items, rows);
  }

  private async sendRenewals(items: Renewal[]): Promise<(RenewalOutcome | undefined)[]> {
    const rows = items.map(({ lease, leaseMs }) => ({
      id: lease.taskId,
      token: lease.token,
      delay_ms: leaseMs,
    }));
    const renewed = await this.db.query<RenewalRow & { id: string; token: string }>(
      RENEW_WATCHING_CANCEL_BATCH_SQL,
      [storableJson(rows)],
    );
    const byClaim = new Map(renewed.map((row) => [claimKey(row.id, row.token), row]));
    return items.map(({ lease }) => {
      const row = byClaim.get(claimKey(lease.taskId, lease.token));
      return row && renewalOutcome(row);
    });
  }

  /**
   * One statement for the batch; per item, whether its row passed its fence. Matched by claim
   * (task and token): two claims of one task in a batch (a stale item beside the row's new
   * claim) are told apart.
   *
   * Batches are sent as unnamed statements, so Postgres plans each for its own size. A named
   * (prepared) one gets a generic plan after five runs, which cannot know how many rows the
   * array or JSON parameter holds: for `finishMany` of 500 rows it joined them by a nested loop
   * over every live lease (`tasks_leased_idx`), 249,500 rows compared and dropped, and the
   * burn-down's finishes cost twice the database CPU (docs/benchmarks.md, "What the profiles
   * showed"). Planning a batch costs well under a millisecond.
   */
  private async sendBatch(
    sql: string,
    items: readonly { lease: TaskLease }[],
    rows: readonly object[],
  ): Promise<boolean[]> {
    const landed = await this.db.query<{ id: string; token: string }>(sql, [storableJson(rows)]);
    const claims = new Set(landed.map((row) => claimKey(row.id, row.token)));
    return items.map(({ lease }) => claims.has(claimKey(lease.taskId, lease.token)));
  }
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

/** The `$3…$12` of `TERMINAL_SET`, in its order. */
function terminalParams(snapshot: TaskSnapshot): unknown[] {
  return [
    snapshot.status,
    snapshot.result !== undefined,
    jsonParam(snapshot.result?.value),
    snapshot.result?.preview ?? null,
    snapshot.result?.truncated ?? false,
    jsonParam(snapshot.resultArtifact),
    snapshot.progress !== undefined,
    jsonParam(snapshot.progress),
    snapshot.error?.code ?? null,
    snapshot.error?.message ?? null,
  ];
}

/** The parameters of `SUBMITTED_SET` ($3…$10), in its order, for a handle write. */
function submittedParams(
  handle: RemoteHandle,
  snapshot: TaskSnapshot | undefined,
  nextDelayMs: number,
): unknown[] {
  const status =
    snapshot?.status === TaskStatus.InputRequired ? TaskStatus.InputRequired : TaskStatus.Working;
  return [
    status,
    handle.remoteTaskId,
    handle.sessionId ?? null,
    handle.protocolVersion ?? null,
    jsonParam(handle.driverState),
    handle.pinnedWorkerId ?? null,
    nextDelayMs,
    jsonParam(status === TaskStatus.InputRequired ? snapshot?.inputRequired : null),
  ];
}

/** A claim's identity in a batch's answer: its task and its lease token. */
function claimKey(taskId: string, token: string): string {
  return `${taskId} ${token}`;
}
