// Guards the crash and ownership rules: never repeat a call silently, never poll a lost pin or a stale task.
import { Contract, Phase, TaskErrorCode, TaskStatus } from '@app/common';
import type { ClaimedTask } from '@app/persistence';
import { preflight, trackingMessage } from './crash-rules';

const ME = 'worker-me';
const HOUR = 3_600_000;
const NOW = new Date('2026-01-01T12:00:00Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms);

function row(overrides: Partial<ClaimedTask> = {}): ClaimedTask {
  return {
    lease: { taskId: 'tsk_1', token: 'tok' },
    phase: Phase.Poll,
    rescued: false,
    dueLagSeconds: 0,
    dbNow: NOW,
    claimSentAtMs: NOW.getTime(),
    claimCount: 1,
    id: 'tsk_1',
    userId: 'user-1',
    threadId: 'thread-1',
    toolset: 'ts',
    contract: Contract.Ordinary,
    server: 'srv',
    status: TaskStatus.Working,
    input: {},
    metadata: null,
    retryOf: null,
    traceContext: null,
    cancelReason: null,
    deadlineAt: null,
    remoteTaskId: 'job_1',
    remoteSessionId: null,
    remoteProtocolVersion: null,
    driverState: null,
    pinnedWorkerId: null,
    submitStartedAt: ago(60_000),
    submitAttempts: 1,
    consecutiveErrors: 0,
    pollCount: 0,
    lastSuccessAt: ago(1000),
    submittedAt: ago(60_000),
    createdAt: ago(61_000),
    cancelRequestedAt: null,
    idempotencyKey: null,
    requestHash: null,
    result: null,
    resultPreview: null,
    resultTruncated: false,
    resultArtifact: null,
    inputRequired: null,
    inputResponses: null,
    progress: null,
    errorCode: null,
    errorMessage: null,
    lastError: null,
    eventSeq: 0,
    updatedAt: ago(1000),
    completedAt: null,
    leaseOwner: ME,
    leaseExpiresAt: ago(-60_000),
    nextAttemptAt: ago(-60_000),
    ...overrides,
  };
}

const ordinary = { contract: Contract.Ordinary, retryOnCrash: false } as const;
const retrying = { contract: Contract.Ordinary, retryOnCrash: true } as const;
const sync = { contract: Contract.SyncCall, retryOnCrash: false } as const;
const syncRetry = { contract: Contract.SyncCall, retryOnCrash: true } as const;
const queued = { phase: Phase.Submit, status: TaskStatus.Queued, remoteTaskId: null } as const;
const heldRow = {
  contract: Contract.SyncCall,
  status: TaskStatus.Working,
  remoteTaskId: null,
} as const;

/** The error code of a `finish` decision (undefined for any other kind). */
function failure(decision: ReturnType<typeof preflight>): TaskErrorCode | undefined {
  return decision.kind === 'finish' ? decision.snapshot.error?.code : undefined;
}

describe('preflight: the ordinary lifecycle', () => {
  it('submits a fresh queued row and polls a healthy working one', () => {
    const fresh = row({ ...queued, submitStartedAt: null, submittedAt: null, lastSuccessAt: null });
    expect(preflight(fresh, ordinary, ME, HOUR)).toEqual({ kind: 'submit' });
    expect(preflight(row(), ordinary, ME, HOUR)).toEqual({ kind: 'poll' });
  });

  it('cancels upstream when a handle is stored', () => {
    expect(preflight(row({ phase: Phase.Cancel }), ordinary, ME, HOUR)).toEqual({
      kind: 'cancel',
    });
  });

  it('cancels locally a queued row whose submit never started', () => {
    const decision = preflight(
      row({ ...queued, phase: Phase.Cancel, submitStartedAt: null }),
      ordinary,
      ME,
      HOUR,
    );
    expect(decision).toEqual({ kind: 'finish', snapshot: { status: TaskStatus.Cancelled } });
  });
});

describe('preflight: a worker died mid-submit (started, no handle)', () => {
  const crashed = row({ ...queued, submitStartedAt: ago(5000) });

  it('ends outcome_uncertain unless the toolset declares retryOnCrash', () => {
    const decision = preflight(crashed, ordinary, ME, HOUR);
    expect(decision.kind).toBe('finish');
    if (decision.kind !== 'finish') return;
    expect(decision.snapshot.status).toBe(TaskStatus.Failed);
    expect(decision.snapshot.error?.code).toBe(TaskErrorCode.OutcomeUncertain);
    expect(decision.snapshot.error?.message).toMatch(/retryOnCrash/);
  });

  it('submits again with retryOnCrash', () => {
    expect(preflight(crashed, retrying, ME, HOUR)).toEqual({ kind: 'submit' });
  });

  it('a cancel cannot name the remote task: outcome_uncertain, even with retryOnCrash', () => {
    const cancelled = row({ ...crashed, phase: Phase.Cancel, cancelRequestedAt: ago(10) });
    expect(failure(preflight(cancelled, ordinary, ME, HOUR))).toBe(TaskErrorCode.OutcomeUncertain);
    expect(failure(preflight(cancelled, retrying, ME, HOUR))).toBe(TaskErrorCode.OutcomeUncertain);
  });
});

describe('preflight: sync-call (the held call is the task)', () => {
  it('a fresh held call is a submit', () => {
    const fresh = row({ ...heldRow, ...queued, submitStartedAt: null, submittedAt: null });
    expect(preflight(fresh, sync, ME, HOUR)).toEqual({ kind: 'submit' });
  });

  it('a working sync row reaching the claim means its holder died: uncertain, or run again', () => {
    const orphan = row({ ...heldRow, phase: Phase.Poll });
    const decision = preflight(orphan, sync, ME, HOUR);
    expect(failure(decision)).toBe(TaskErrorCode.OutcomeUncertain);
    expect(decision.kind === 'finish' && decision.snapshot.error?.message).toMatch(/mid-call/);
    expect(preflight(orphan, syncRetry, ME, HOUR)).toEqual({ kind: 'submit' });
  });

  it('a held call released as never sent (a failed connect) is sent again, not uncertain', () => {
    // holdCall marks the row `working` before connecting; releaseUnsentSubmit clears only
    // submit_started_at, so the row comes back in the poll phase with no recorded start.
    const unsent = row({ ...heldRow, phase: Phase.Poll, submitStartedAt: null });
    expect(preflight(unsent, sync, ME, HOUR)).toEqual({ kind: 'submit' });
    const cancelled = row({ ...heldRow, phase: Phase.Cancel, submitStartedAt: null });
    expect(preflight(cancelled, sync, ME, HOUR)).toEqual({ kind: 'cancel' });
  });

  it('the crash rule wins over the tracking timeout (a held call may last hours)', () => {
    const longHeld = row({ ...heldRow, lastSuccessAt: null, submittedAt: ago(10 * HOUR) });
    expect(failure(preflight(longHeld, sync, ME, HOUR))).toBe(TaskErrorCode.OutcomeUncertain);
    expect(preflight(longHeld, syncRetry, ME, HOUR)).toEqual({ kind: 'submit' });
  });

  it('a cancel after the holder died cannot know what the call did', () => {
    const decision = preflight(row({ ...heldRow, phase: Phase.Cancel }), syncRetry, ME, HOUR);
    expect(failure(decision)).toBe(TaskErrorCode.OutcomeUncertain);
    expect(decision.kind === 'finish' && decision.snapshot.error?.message).toMatch(/holding/);
  });
});

describe('preflight: pinned rows (stdio mcp-tasks)', () => {
  const pinned = (worker: string, phase = Phase.Poll) =>
    row({ contract: Contract.McpTasks, pinnedWorkerId: worker, phase });

  it("another worker's pinned row (it reaches us only once that worker is dead) is lost", () => {
    for (const phase of [Phase.Poll, Phase.Cancel]) {
      const decision = preflight(pinned('worker-dead', phase), ordinary, ME, HOUR);
      expect(failure(decision)).toBe(TaskErrorCode.UpstreamTaskLost);
      expect(decision.kind === 'finish' && decision.snapshot.error?.message).toMatch(/worker-dead/);
    }
  });

  it('our own pinned row is polled and cancelled as usual', () => {
    expect(preflight(pinned(ME), ordinary, ME, HOUR)).toEqual({ kind: 'poll' });
    expect(preflight(pinned(ME, Phase.Cancel), ordinary, ME, HOUR)).toEqual({ kind: 'cancel' });
  });
});

describe('preflight: tracking timeout (database clock of the claim)', () => {
  const TIMEOUT = 2000;

  it('fails a task without a successful poll for TRACKING_TIMEOUT_MS, not one just below', () => {
    const stale = row({ lastSuccessAt: ago(TIMEOUT) });
    const decision = preflight(stale, ordinary, ME, TIMEOUT);
    expect(failure(decision)).toBe(TaskErrorCode.TrackingTimeout);
    expect(decision.kind === 'finish' && decision.snapshot.error?.message).toBe(
      trackingMessage(TIMEOUT),
    );
    expect(preflight(row({ lastSuccessAt: ago(TIMEOUT - 1) }), ordinary, ME, TIMEOUT)).toEqual({
      kind: 'poll',
    });
  });

  it('falls back to the submit time, then the creation time, when nothing succeeded yet', () => {
    const neverPolled = row({ lastSuccessAt: null, submittedAt: ago(TIMEOUT + 1) });
    expect(failure(preflight(neverPolled, ordinary, ME, TIMEOUT))).toBe(
      TaskErrorCode.TrackingTimeout,
    );
    const neverSubmitted = row({ lastSuccessAt: null, submittedAt: null, createdAt: ago(1) });
    expect(preflight(neverSubmitted, ordinary, ME, TIMEOUT)).toEqual({ kind: 'poll' });
  });

  it('never times out a submit or a cancel (only polls track)', () => {
    const old = { lastSuccessAt: null, submittedAt: null, createdAt: ago(10 * HOUR) };
    const fresh = row({ ...queued, ...old, submitStartedAt: null });
    expect(preflight(fresh, ordinary, ME, TIMEOUT)).toEqual({ kind: 'submit' });
    const cancel = row({ phase: Phase.Cancel, lastSuccessAt: ago(10 * HOUR) });
    expect(preflight(cancel, ordinary, ME, TIMEOUT)).toEqual({ kind: 'cancel' });
  });

  it('the message rounds to seconds and carries the last error when there is one', () => {
    expect(trackingMessage(2499)).toBe('no successful poll for 2 s (TRACKING_TIMEOUT_MS)');
    expect(trackingMessage(86_400_000, 'boom')).toBe(
      'no successful poll for 86400 s (TRACKING_TIMEOUT_MS); last error: boom',
    );
  });
});
