import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import type { Logger } from 'pino';
import {
  DATABASE_ERROR_PREFIX,
  ERROR_MESSAGE_STORED_CHARS,
  LAST_ERROR_CHARS,
  LeaseLostError,
  PermanentTaskError,
  Phase,
  TaskErrorCode,
  TaskStatus,
  TransientTaskError,
  cutText,
  randomId,
} from '@app/common';
import { McpServersConfig, ServerConfig, Settings, ToolsetConfig, SETTINGS } from '@app/config';
import { DriverRegistry } from '@app/drivers';
import { taskLogger } from '@app/logging';
import { AttemptOutcome, GatewayMetrics } from '@app/metrics';
import { ClaimedTask, TaskLeaseRepository, isDatabaseError } from '@app/persistence';
import { upstreamRetryAfterMs } from '@app/upstream';
import { AttemptDeadline, attemptDeadlineMs, localLeaseEndMs } from './attempt-deadline';
import { preflight, trackingMessage, trackingTimedOut } from './crash-rules';
import { HeldCalls } from './held-call.guard';
import { abortedForDeadline, abortKind } from './item-abort';
import { PhaseRunner } from './phase.runner';
import { PollScheduler } from './poll-scheduler';
import { PushWatchService } from '../push/push-watch.service';
import { UnrepeatableCalls } from './unrepeatable-calls';
import { SubmitNotLandedError } from './until-landed';
import { MCP_SERVERS, WORKER_ID } from '../poller.tokens';
import { annotateTaskSpan, runInTaskSpan } from '@app/tracing';

/** When the row should next be looked at (for the loop's wake-up timer), if it is still active. */
export type AttemptResult = { nextDueInMs?: number };

/** A row whose toolset or server is not (or no longer) in this worker's mcpServers config. */
export class ToolsetNotConfiguredError extends TransientTaskError {}

/**
 * Runs one claimed item: phase dispatch inside its own try/catch, one log line and one metric
 * outcome per attempt. Nothing an item does can reject this method, so nothing can stop the
 * loop or touch a sibling (leases.md, "Concurrency and isolation").
 */
@Injectable()
export class TaskRunnerService {
  private readonly scheduler: PollScheduler;
  private readonly phases: PhaseRunner;
  private readonly heldCalls = new HeldCalls();
  private readonly calls = new UnrepeatableCalls();

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(MCP_SERVERS) private readonly config: McpServersConfig,
    @Inject(WORKER_ID) private readonly workerId: string,
    private readonly leases: TaskLeaseRepository,
    private readonly drivers: DriverRegistry,
    private readonly metrics: GatewayMetrics,
    private readonly pino: PinoLogger,
    push: PushWatchService,
  ) {
    this.scheduler = new PollScheduler(settings.scheduling);
    this.phases = new PhaseRunner({
      settings,
      workerId,
      leases,
      drivers,
      metrics,
      scheduler: this.scheduler,
      heldCalls: this.heldCalls,
      calls: this.calls,
      push,
    });
  }

  /** A `cancel` NOTIFY: held sync calls check for their cancel request now. */
  checkHeldCalls(): void {
    this.heldCalls.cancelNoticed();
  }

  /**
   * Whether the item's attempt holds an upstream call a repeat could duplicate (a submit, a held
   * sync call, a multi-round-trip retry): a draining poller must not abort it, whatever the
   * phase of its claim (leases.md, "Held calls at shutdown").
   */
  holdsUpstreamCall(item: ClaimedTask): boolean {
    return this.calls.holds(item);
  }

  /** One attempt, traced as a child of the task's submit (a no-op when tracing is off). */
  run(item: ClaimedTask, controller: AbortController): Promise<AttemptResult> {
    const attributes = { 'task.phase': item.phase, 'task.toolset': item.toolset };
    return runInTaskSpan(`poller.${item.phase}`, item.traceContext, attributes, () =>
      this.attempt(item, controller),
    );
  }

  private async attempt(item: ClaimedTask, controller: AbortController): Promise<AttemptResult> {
    const log = taskLogger(this.pino.logger, {
      task_id: item.id,
      phase: item.phase,
      toolset: item.toolset,
      claim_id: randomId('clm_', 12),
    });
    const started = performance.now();
    let outcome: AttemptOutcome;
    let result: AttemptResult = {};
    let detail: string | undefined;
    // One deadline for the whole chain of connects and calls (leases.md, "Attempt deadlines").
    const deadline = new AttemptDeadline(
      controller.signal,
      attemptDeadlineMs(item, this.settings.lease.ms),
    );
    try {
      const { toolset, server } = this.resolve(item);
      const decision = preflight(
        item,
        toolset,
        this.workerId,
        this.settings.scheduling.trackingTimeoutMs,
      );
      result = await this.phases.run(item, decision, {
        toolset,
        server,
        controller,
        signal: deadline.signal,
        log,
        leaseExpiresAtMs: localLeaseEndMs(item),
      });
      outcome = 'ok';
    } catch (error) {
      detail = error instanceof Error ? error.message : String(error);
      [outcome, result] = await this.fail(item, error, controller.signal, log);
    } finally {
      deadline.dispose();
      this.calls.end(item);
    }
    this.metrics.attempts.inc({ phase: item.phase, toolset: item.toolset, outcome });
    annotateTaskSpan({ 'task.outcome': outcome });
    const line = {
      outcome,
      ms: Math.round(performance.now() - started),
      error: detail,
      // A rescue (the row's previous lease expired unreleased) says how late it was claimed,
      // by the database clock: invariant 3 is read from here.
      ...(item.rescued ? { rescued: true, due_lag_ms: Math.round(item.dueLagSeconds * 1000) } : {}),
    };
    if (outcome === 'ok' || outcome === 'aborted') log.info(line, 'attempt');
    else log.warn(line, 'attempt');
    return result;
  }

  private resolve(item: ClaimedTask): { toolset: ToolsetConfig; server: ServerConfig } {
    const toolset = this.config.toolsets.get(item.toolset);
    if (!toolset) {
      throw new ToolsetNotConfiguredError(
        `toolset "${item.toolset}" is not in this worker's mcpServers config (was it removed or renamed?)`,
      );
    }
    const server = this.config.servers.find((s) => s.name === toolset.server);
    if (!server || toolset.server !== item.server) {
      throw new ToolsetNotConfiguredError(
        `toolset "${item.toolset}" now belongs to server "${toolset.server}", but this task was ` +
          `submitted to server "${item.server}"`,
      );
    }
    return { toolset, server };
  }

  /** Every failure ends in exactly one outcome; a failing write here is logged, never thrown. */
  private async fail(
    item: ClaimedTask,
    error: unknown,
    signal: AbortSignal,
    log: Logger,
  ): Promise<[AttemptOutcome, AttemptResult]> {
    const kind = abortKind(signal);
    try {
      if (error instanceof LeaseLostError || kind === 'lease_lost') {
        this.metrics.leaseLost.inc({ phase: item.phase });
        return ['lease_lost', {}];
      }
      if (kind === 'shutdown') {
        await this.leases.release(item.lease);
        return ['aborted', { nextDueInMs: 0 }];
      }
      if (kind === 'cancel') {
        await this.phases.finish(
          item,
          { status: TaskStatus.Cancelled },
          item.cancelReason === 'deadline' || abortedForDeadline(signal),
        );
        return ['aborted', {}];
      }
      if (error instanceof PermanentTaskError) {
        const message = cutText(error.message, ERROR_MESSAGE_STORED_CHARS);
        await this.phases.finish(item, {
          status: TaskStatus.Failed,
          error: { code: error.code, message },
        });
        return ['permanent_error', {}];
      }
      return [await this.transient(item, error), {}];
    } catch (writeError) {
      if (writeError instanceof LeaseLostError) {
        this.metrics.leaseLost.inc({ phase: item.phase });
        return ['lease_lost', {}];
      }
      // The database is unreachable: the lease expires and the claim query retries the row.
      log.error({ err: writeError }, 'could not record the attempt; the lease will expire');
      return ['transient_error', {}];
    }
  }

  private async transient(item: ClaimedTask, error: unknown): Promise<AttemptOutcome> {
    const text = cutText(lastErrorText(error), LAST_ERROR_CHARS);
    const silentMs =
      item.phase === Phase.Submit
        ? undefined
        : trackingTimedOut(item, this.settings.scheduling.trackingTimeoutMs);
    if (silentMs !== undefined) {
      await this.phases.finish(item, {
        status: TaskStatus.Failed,
        error: { code: TaskErrorCode.TrackingTimeout, message: trackingMessage(silentMs, text) },
      });
      return 'permanent_error';
    }
    const delay = this.scheduler.afterError(item.consecutiveErrors, upstreamRetryAfterMs(error));
    if (error instanceof SubmitNotLandedError) {
      await this.leases.releaseUnsentSubmit(item.lease, text, delay);
    } else {
      await this.leases.releaseAfterError(item.lease, text, delay);
    }
    return 'transient_error';
  }
}

/**
 * The stored text of a transient error. A failure of the gateway's own database (a write it
 * refused, a connection lost) is marked as such, so it is never shown as the upstream's error.
 */
function lastErrorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const database = !(error instanceof TransientTaskError) && isDatabaseError(error);
  return database ? `${DATABASE_ERROR_PREFIX}${message}` : message;
}
