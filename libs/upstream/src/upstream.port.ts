import type { CallToolResult, ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { TaskProtocolVersion } from '@app/config';

/** Per-request options. Every request has a deadline: `timeoutMs`, else the server's callTimeoutMs. */
export interface RequestOptions {
  timeoutMs?: number;
  /**
   * The caller's abort: the poller's (lease lost, cancel, shutdown) or the attempt's deadline,
   * which ends the request as an `UpstreamDeadlineError` (docs/leases.md, "Attempt deadlines").
   */
  signal?: AbortSignal;
  /** Progress notifications of this request (sync-call). */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * Safe to repeat (status, tasks/get, tools/list). Only idempotent requests are retried
   * automatically, once, after a session expiry; anything else is never replayed.
   */
  idempotent: boolean;
}

/** One live MCP session on one upstream server. */
export interface UpstreamSession {
  readonly server: string;
  /** Streamable HTTP session ID, when the transport has one. */
  readonly sessionId?: string;
  readonly protocolVersion?: string;
  readonly capabilities: ServerCapabilities | undefined;
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<CallToolResult>;
  /** A raw JSON-RPC request (tasks/get, tasks/result, tasks/cancel, task-augmented tools/call). */
  request(
    method: string,
    params: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<unknown>;
}

/** Options of one 2026-07-28 request. */
export interface StatelessRequestOptions extends RequestOptions {
  /** The `Mcp-Name` header: the tool of `tools/call`, the task ID of `tasks/*`. */
  name?: string;
  /** Leaves the tasks extension out of the declared capabilities: the call must not be a task. */
  withoutTasks?: boolean;
}

/**
 * MCP 2026-07-28 to one server: no session, every request carries its own envelope. Used for the
 * tasks extension (SEP-2663): `tools/call`, `tasks/get`, `tasks/update`, `tasks/cancel`.
 */
export interface StatelessSession {
  readonly server: string;
  /** Resolves with the JSON-RPC `result`; a JSON-RPC error is an `UpstreamRpcError`. */
  request(
    method: string,
    params: Record<string, unknown>,
    options: StatelessRequestOptions,
  ): Promise<Record<string, unknown>>;
  /** Lets go of what it holds until its next request (a stdio child); nothing over HTTP. */
  release?(): Promise<void>;
}

/** What a listen stream reports; each callback is the owner's, and none may throw into it. */
export interface TaskListenHandlers {
  /** The server's first message: the remote task IDs it agreed to report. */
  onAcknowledged(taskIds: string[]): void;
  /** A `notifications/tasks` for one task: a hint that it changed, never its state. */
  onTask(taskId: string): void;
  /** The stream ended or failed (refused, cut, ended by the server); not called after close(). */
  onEnd(reason: string): void;
}

/** One live `subscriptions/listen`; close() ends it without calling `onEnd`. */
export interface TaskListen {
  close(): void;
}

/**
 * Push on a 2025-11-25 task session (docs/connections.md, "Push"): a `notifications/tasks/status`
 * for a remote task, or the end of the server stream that carries them.
 */
export type SessionPushEvent =
  | { kind: 'status'; server: string; sessionId: string; taskId: string }
  | { kind: 'ended'; server: string; sessionId: string; reason: string };

/**
 * The key a 2025-11-25 session's pushes come under (`SessionPushEvent.sessionId`), and its tasks
 * with them: the session's ID, or for a stdio child, whose one session has none, a name no
 * session ID can have (session IDs are visible ASCII, with no spaces). Its tasks live and die
 * with the child, so one key per server serves each child in turn.
 */
export function pushSessionKey(server: string, sessionId: string | null): string {
  return sessionId ?? `stdio child of ${server}`;
}

export type SupervisorState = 'connecting' | 'ready' | 'degraded' | 'parked' | 'closed';

export interface ServerStatus {
  server: string;
  state: SupervisorState;
  /** Why the server is not ready (permanent classification or last transient error). */
  reason?: string;
  /** The last tools/list of a successful connect (all pages). */
  tools?: Tool[];
  capabilities?: ServerCapabilities;
  /** The task design the server speaks, once pinned or discovered. */
  taskProtocol?: TaskProtocolVersion;
  /**
   * When the 2026-07-28 side serves the server and a 2025-11-25 session runs beside it (for
   * `ordinary` and `sync-call` toolsets): that session's own status, which those toolsets follow.
   */
  sessionSide?: ServerStatus;
}

/**
 * What the drivers and the poller need from the connection layer. Implemented by the
 * supervisor pool in this library; only the poller constructs it.
 */
export interface UpstreamPort {
  /**
   * The pooled session of a server (ordinary, sync-call); for a server served without a session
   * (pinned to 2026-07-28, or found to refuse sessions), its stateless tool calls
   * (docs/connections.md, "Which side serves").
   * Throws UpstreamUnavailableError.
   * Every wait for a connection takes the attempt's signal: its deadline ends the wait
   * (`UpstreamDeadlineError`, nothing sent), though a connect shared with others goes on.
   */
  session(server: string, signal?: AbortSignal): Promise<UpstreamSession>;
  /**
   * A session for creating native tasks: kept apart from the pooled one and never ended with
   * an HTTP DELETE while tasks may be bound to it. Over stdio it is the child process's session.
   */
  taskSession(server: string, signal?: AbortSignal): Promise<UpstreamSession>;
  /** Reattaches to a stored Streamable HTTP session by ID, without a new initialize. */
  resumeSession(
    server: string,
    sessionId: string,
    protocolVersion: string,
    signal?: AbortSignal,
  ): Promise<UpstreamSession>;
  /**
   * The task design the server speaks: pinned by its `protocolVersion`, else found with
   * `server/discover` and asked again on the rules of docs/connections.md ("Which side serves").
   * Throws `UpstreamError` when the server cannot be asked now.
   */
  taskProtocol(server: string, signal?: AbortSignal): Promise<TaskProtocolVersion>;
  /** The stateless 2026-07-28 client of an HTTP server. */
  statelessSession(server: string): StatelessSession;
  status(server: string): ServerStatus;
  /** Called after every successful connect, re-ask, tools/list_changed refresh and era change. */
  onToolsChanged(listener: (status: ServerStatus) => void): void;
  close(): Promise<void>;
}
