import { Contract, PermanentTaskError } from '@app/common';
import { DEFAULT_MAX_MESSAGE_BYTES } from '@app/config';
import type { ServerConfig, TaskProtocolVersion, ToolsetConfig } from '@app/config';
import type {
  RequestOptions,
  ServerStatus,
  StatelessSession,
  UpstreamPort,
  UpstreamSession,
} from '@app/upstream';
import type { CallToolResult, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { DriverContext, DriverTask } from '../contract-driver';

/** One call a driver made, as the fake saw it. */
export interface RecordedCall {
  kind: 'callTool' | 'request' | 'stateless';
  name: string;
  params: Record<string, unknown>;
  options: RequestOptions & { name?: string };
  session: string;
}

type Handler = (name: string, params: Record<string, unknown>, options: RequestOptions) => unknown;

/**
 * A scripted UpstreamPort for the drivers' unit specs: every callTool/request goes to `handler`,
 * which returns an answer or throws an upstream error. Test-only; not exported by the library.
 */
export class FakeUpstream implements UpstreamPort {
  readonly calls: RecordedCall[] = [];
  handler: Handler = () => {
    throw new Error('no handler');
  };
  serverStatus: ServerStatus = { server: 'demo', state: 'ready', tools: [], capabilities: {} };
  sessionId: string | undefined = 'sess-1';
  capabilities: ServerCapabilities | undefined = undefined;
  resumed: Array<{ sessionId: string; protocolVersion: string }> = [];
  /** What taskProtocol answers; a function may throw (discovery failed). */
  protocol: () => TaskProtocolVersion = () => '2025-11-25';

  session(): Promise<UpstreamSession> {
    return Promise.resolve(this.makeSession('pooled'));
  }
  taskSession(): Promise<UpstreamSession> {
    return Promise.resolve(this.makeSession('task'));
  }
  resumeSession(
    _server: string,
    sessionId: string,
    protocolVersion: string,
  ): Promise<UpstreamSession> {
    this.resumed.push({ sessionId, protocolVersion });
    return Promise.resolve(this.makeSession(`resumed:${sessionId}`));
  }
  taskProtocol(): Promise<TaskProtocolVersion> {
    return new Promise((resolve) => resolve(this.protocol()));
  }
  statelessSession(): StatelessSession {
    return {
      server: 'demo',
      request: async (method, params, options) => {
        this.calls.push({ kind: 'stateless', name: method, params, options, session: 'stateless' });
        return this.handler(method, params, options) as Record<string, unknown>;
      },
    };
  }
  status(): ServerStatus {
    return this.serverStatus;
  }
  onToolsChanged(): void {}
  close(): Promise<void> {
    return Promise.resolve();
  }

  private makeSession(label: string): UpstreamSession {
    // async, so a handler that throws becomes a rejection, as a real session's failures are.
    const record = async (
      kind: RecordedCall['kind'],
      name: string,
      params: Record<string, unknown>,
      options: RequestOptions,
    ): Promise<unknown> => {
      this.calls.push({ kind, name, params, options, session: label });
      return this.handler(name, params, options);
    };
    return {
      server: 'demo',
      sessionId: label === 'pooled' ? undefined : this.sessionId,
      protocolVersion: '2025-11-25',
      capabilities: this.capabilities,
      callTool: (name, args, options) =>
        record('callTool', name, args, options) as Promise<CallToolResult>,
      request: (method, params, options) => record('request', method, params, options),
    };
  }
}

/** The PermanentTaskError that `run` throws; any other error is rethrown, none fails too. */
export function permanentFailure(run: () => unknown): PermanentTaskError {
  try {
    run();
  } catch (error) {
    if (error instanceof PermanentTaskError) return error;
    throw error;
  }
  throw new Error('expected a PermanentTaskError');
}

export const LIMITS = { maxResultBytes: 1000, previewChars: 20 };

export function serverConfig(transport: ServerConfig['transport'] = 'http'): ServerConfig {
  return {
    name: 'demo',
    transport,
    args: [],
    env: {},
    headers: {},
    connectTimeoutMs: 1000,
    callTimeoutMs: 5000,
    maxConcurrentCalls: 4,
    keepaliveIntervalMs: 30000,
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
    parkedProbeMs: 300000,
    connectAttempts: 3,
    sharedState: false,
    toolsets: [],
  };
}

export const ORDINARY: ToolsetConfig = {
  name: 'jobs',
  server: 'demo',
  contract: Contract.Ordinary,
  retryOnCrash: false,
  submitTool: 'demo_submit',
  statusTool: 'demo_status',
  cancelTool: 'demo_cancel',
};

export function context(
  toolset: ToolsetConfig,
  task: Partial<DriverTask> = {},
  extra: Partial<DriverContext> = {},
): DriverContext {
  return {
    task: {
      id: 'task_local',
      input: { a: 1 },
      remoteTaskId: null,
      remoteSessionId: null,
      remoteProtocolVersion: null,
      driverState: null,
      ...task,
    },
    toolset,
    server: serverConfig(),
    workerId: 'worker-1',
    limits: LIMITS,
    signal: new AbortController().signal,
    ...extra,
  };
}

/** A tool result carrying structuredContent (and the same JSON as text, as servers do). */
export function structured(value: unknown): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    structuredContent: value as Record<string, unknown>,
  };
}

export function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
