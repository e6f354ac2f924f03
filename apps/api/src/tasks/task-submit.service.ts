import { Inject, Injectable } from '@nestjs/common';
import { TaskStatus, isTerminal } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { GatewayMetrics, SubmitRefusalReason } from '@app/metrics';
import {
  CatalogEntry,
  CreateResult,
  NewTask,
  SubmitQuota,
  TaskRepository,
  TaskRow,
} from '@app/persistence';
import { TraceCarrier, startSubmitSpan } from '@app/tracing';
import { HeldRequests } from '../health/held-requests';
import { ToolsetCatalog } from '../toolsets/toolset-catalog.service';
import { ArgumentsValidator } from './arguments-validator.service';
import { QUOTA_DETAILS, QUOTA_REASONS } from './submit-quota.texts';
import { SubmitRequest, parseSubmitBody, requestHash } from './submit-request';
import {
  IDEMPOTENCY_KEY_FIELD,
  IdempotencyConflict,
  InvalidArguments,
  MalformedRequest,
  QuotaExceeded,
  Refusal,
  UnknownToolset,
} from '../refusals/refusal';

/** Printable ASCII, 1..255 chars: a key travels in a header and is compared byte for byte. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

/** One submit as the controller hands it over. */
export interface SubmitCommand {
  userId: string;
  /** The caller's tenant (AUTH_TENANT_CLAIM), stored on the task for fair share. */
  tenant?: string;
  threadId: string;
  body: unknown;
  idempotencyKey?: string;
  /** The failed task this submit retries (`POST …/retry`), linked as `retry_of`. */
  retryOf?: string;
  /** Seconds to hold the answer until the task ends or asks a question (`Prefer: wait`). */
  waitSeconds?: number;
  /** Fires when the client disconnects, ending a wait early. */
  abort?: AbortSignal;
  /** The request's W3C `traceparent`/`tracestate` headers, continued when valid. */
  trace?: { traceparent?: string; tracestate?: string };
}

/** The outcome: a new task (201) or the earlier task of the same idempotent request (200). */
export interface SubmitOutcome {
  created: boolean;
  task: TaskRow;
  /**
   * The toolset's catalog entry as this submit read it (the answer says why a task waits); none
   * for a replay whose toolset has left the catalog since.
   */
  entry?: CatalogEntry;
}

/**
 * Accepts a task: body shape, toolset, arguments against its schema, then one idempotent insert
 * checked against the user's quotas in the same transaction (a refusal leaves nothing behind). The API's whole part in running a task is this durable row; pollers do
 * the rest. A toolset that is unavailable still takes tasks: they wait in `queued`.
 */
@Injectable()
export class TaskSubmitService {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly catalog: ToolsetCatalog,
    private readonly validator: ArgumentsValidator,
    private readonly held: HeldRequests,
    private readonly metrics: GatewayMetrics,
    @Inject(SETTINGS) settings: Settings,
  ) {
    this.quota = {
      ...settings.api.quotas,
      // A task ends on a poll at the earliest: waiting less than one poll interval is pointless.
      activeRetryAfterSeconds: Math.max(1, Math.ceil(settings.scheduling.pollIntervalMs / 1000)),
    };
  }

  private readonly quota: SubmitQuota;

  async submit(command: SubmitCommand): Promise<SubmitOutcome> {
    // The submit span's context is stored on the task: its attempts join this trace.
    const span = startSubmitSpan(command.trace ?? {});
    let outcome = 'refused';
    try {
      const accepted = await this.accept(command, span?.carrier ?? null);
      outcome = accepted.created ? 'created' : 'replayed';
      return accepted;
    } finally {
      span?.end({ 'task.outcome': outcome });
    }
  }

  private async accept(
    command: SubmitCommand,
    traceContext: TraceCarrier | null,
  ): Promise<SubmitOutcome> {
    const key = command.idempotencyKey;
    if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
      throw this.refused(
        'invalid_request',
        new MalformedRequest('Invalid Idempotency-Key header.', [
          { path: IDEMPOTENCY_KEY_FIELD, message: 'must be 1 to 255 printable ASCII characters' },
        ]),
      );
    }
    let request: SubmitRequest;
    try {
      request = parseSubmitBody(command.body);
    } catch (error) {
      throw this.refused('invalid_request', error);
    }
    const draft: Draft = { command, request, key, traceContext };
    // The entry last read, when the arguments fit it: the insert checks that it is still the
    // catalog's row, one round trip instead of a read and then the insert. Otherwise, or when the
    // row changed, the catalog is read and the submit decided on what it says now.
    const { entry, result } =
      (await this.createIfCatalogUnchanged(draft)) ?? (await this.createFresh(draft));
    if (result.kind === 'refused') {
      throw this.refused(
        QUOTA_REASONS[result.quota],
        new QuotaExceeded(
          result.quota,
          QUOTA_DETAILS[result.quota](result.limit),
          result.retryAfterSeconds,
        ),
      );
    }
    if (result.kind === 'conflict') {
      throw this.refused(
        'idempotency_conflict',
        new IdempotencyConflict(
          'This Idempotency-Key was used with another request.',
          'was already used with a different body or thread',
        ),
      );
    }
    if (result.kind === 'replayed') {
      // The earlier task may belong to a thread deleted since: it must never show again.
      const visible = await this.tasks.findForUser(
        command.userId,
        result.task.id,
        command.threadId,
      );
      if (!visible) {
        throw this.refused(
          'idempotency_conflict',
          new IdempotencyConflict(
            'This Idempotency-Key was used in a deleted thread.',
            'was already used; choose a new key',
          ),
        );
      }
    }
    if (result.kind === 'created') this.metrics.submitted.inc({ toolset: entry!.name });
    const task = command.waitSeconds
      ? await this.waitWhileRunning(result.task, command.waitSeconds, command.abort)
      : result.task;
    return { created: result.kind === 'created', task, entry };
  }

  /** The submit against the entry last read, unless that entry is not the catalog's any more. */
  private async createIfCatalogUnchanged(draft: Draft): Promise<Created | undefined> {
    const known = this.catalog.lastRead(draft.request.toolset);
    if (!known || known.entry.removed) return undefined;
    if (this.validator.validate(known.entry.inputSchema, draft.request.arguments).length > 0) {
      return undefined;
    }
    const result = await this.tasks.createIfCatalogUnchanged(
      newTask(draft, known.entry),
      this.quota,
      known.version,
    );
    return result.kind === 'stale' ? undefined : { entry: known.entry, result };
  }

  /**
   * The submit against the toolset's entry as the catalog has it now, checked first. A refusal
   * by the catalog (unknown or removed toolset, arguments off the schema) is given only once the
   * idempotency key, if any, is known to be unused: a retry of a submit that was accepted gets
   * its task back (200) even after the catalog changed (docs/api.md, "Behaviour worth knowing").
   */
  private async createFresh(draft: Draft): Promise<Created> {
    const entry = await this.catalog.find(draft.request.toolset);
    const refusal = this.catalogRefusal(draft, entry);
    if (refusal) {
      const earlier = await this.earlierSubmit(draft);
      if (earlier) return { entry: entry ?? undefined, result: earlier };
      throw this.refused(refusal.reason, refusal.problem);
    }
    return { entry: entry!, result: await this.tasks.create(newTask(draft, entry!), this.quota) };
  }

  /** Why the catalog refuses this submit as it stands now, or undefined when it takes it. */
  private catalogRefusal(
    draft: Draft,
    entry: CatalogEntry | null,
  ): { reason: SubmitRefusalReason; problem: Refusal } | undefined {
    if (!entry || entry.removed) {
      // A removed toolset (configured on no live poller) would take a task that can never run.
      const message = entry
        ? 'is no longer configured on the gateway (see GET /v1/toolsets)'
        : 'is not a toolset in the catalog (see GET /v1/toolsets)';
      return { reason: 'unknown_toolset', problem: new UnknownToolset(message) };
    }
    const errors = this.validator.validate(entry.inputSchema, draft.request.arguments);
    if (errors.length === 0) return undefined;
    return {
      reason: 'invalid_arguments',
      problem: new InvalidArguments(
        "The arguments do not match the toolset's input schema.",
        errors,
      ),
    };
  }

  /** The task an earlier submit with this idempotency key stored (a replay or a conflict). */
  private async earlierSubmit(draft: Draft): Promise<CreateResult | null> {
    const { command, request, key } = draft;
    if (key === undefined) return null;
    return this.tasks.findEarlier({
      userId: command.userId,
      threadId: command.threadId,
      idempotencyKey: key,
      requestHash: requestHash(command.threadId, request),
    });
  }

  /**
   * `Prefer: wait` (docs/api.md): the task as last read once it has ended or asks a question
   * (`input_required`), or as it is when the wait ends, the caller goes away or the app closes.
   * At most 200 ms late after the change: a re-read of one row by primary key every 200 ms at
   * most, for at most MAX_WAIT_SECONDS.
   */
  private waitWhileRunning(task: TaskRow, seconds: number, abort?: AbortSignal): Promise<TaskRow> {
    return this.held.hold({
      task,
      waiting: (row) => !isTerminal(row.status) && row.status !== TaskStatus.InputRequired,
      // A thread deleted meanwhile reads as gone: the answer is then the task as created.
      read: () => this.tasks.findForUser(task.userId, task.id, task.threadId),
      deadline: Date.now() + seconds * 1000,
      firstCheckMs: 20,
      maxCheckMs: 200,
      abort,
    });
  }

  /** Counts a refusal by reason (`mcp_tasks_submit_refusals_total`) and hands the error back. */
  private refused<E>(reason: SubmitRefusalReason, error: E): E {
    this.metrics.submitRefusals.inc({ reason });
    return error;
  }
}

/** A submit checked as far as its body: what the insert needs besides the catalog entry. */
interface Draft {
  command: SubmitCommand;
  request: SubmitRequest;
  key: string | undefined;
  traceContext: TraceCarrier | null;
}

/** The insert's outcome and the catalog entry it was decided on. */
interface Created {
  entry: CatalogEntry | undefined;
  result: CreateResult;
}

function newTask(draft: Draft, entry: CatalogEntry): NewTask {
  const { command, request, key } = draft;
  return {
    userId: command.userId,
    tenant: command.tenant ?? null,
    threadId: command.threadId,
    toolset: entry.name,
    contract: entry.contract,
    server: entry.server,
    input: request.arguments,
    metadata: request.metadata,
    idempotencyKey: key ?? null,
    requestHash: key === undefined ? null : requestHash(command.threadId, request),
    traceContext: draft.traceContext,
    deadlineSeconds: entry.deadlineSeconds,
    retryOf: command.retryOf ?? null,
  };
}
