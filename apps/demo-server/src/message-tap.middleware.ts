import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { DemoContext } from './demo-context.interface';

export interface TapOptions {
  /** Called instead of delivering the first request after `initialized` (drop-after-initialize). */
  onDrop?: () => void;
}

function method(message: JSONRPCMessage): string | undefined {
  return 'method' in message ? message.method : undefined;
}

function isRequest(message: JSONRPCMessage): boolean {
  return 'method' in message && 'id' in message;
}

/**
 * Sits between a connected transport and the SDK's protocol handler. It counts tasks/* requests
 * (the SDK answers them from the store, which is also called internally, so counting in the
 * store would overcount), delays `initialize` for --slow-initialize-ms, and drops the first
 * request after `initialized` for --drop-after-initialize.
 */
export function tapTransport(
  transport: Transport,
  context: DemoContext,
  options: TapOptions = {},
): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('tapTransport must run after server.connect(transport)');
  let initialized = false;
  transport.onmessage = (message, extra) => {
    const name = method(message);
    if (isRequest(message)) {
      countTaskRequest(context, message);
      recordTrace(context, message, extra?.requestInfo?.headers.traceparent);
    }
    if (name === 'initialize' && context.options.slowInitializeMs > 0) {
      setTimeout(() => deliver(message, extra), context.options.slowInitializeMs);
      return;
    }
    if (
      initialized &&
      isRequest(message) &&
      options.onDrop &&
      context.options.dropAfterInitialize
    ) {
      options.onDrop();
      return;
    }
    if (name === 'notifications/initialized') initialized = true;
    deliver(message, extra);
  };
}

/** Notes a `traceparent` the request carried (HTTP header or `_meta`), for demo_stats. */
function recordTrace(context: DemoContext, message: JSONRPCMessage, header: unknown): void {
  const meta = 'params' in message ? message.params?._meta : undefined;
  const fromMeta = typeof meta?.traceparent === 'string' ? meta.traceparent : undefined;
  const fromHeader = typeof header === 'string' ? header : undefined;
  if (fromMeta === undefined && fromHeader === undefined) return;
  context.registry.recordTrace({
    method: method(message) ?? '',
    ...(fromHeader === undefined ? {} : { header: fromHeader }),
    ...(fromMeta === undefined ? {} : { meta: fromMeta }),
  });
}

function countTaskRequest(context: DemoContext, message: JSONRPCMessage): void {
  const params = 'params' in message ? message.params : undefined;
  const taskId = typeof params?.taskId === 'string' ? params.taskId : undefined;
  const { registry } = context;
  switch (method(message)) {
    case 'tasks/get':
      return registry.count('tasks', 'gets');
    case 'tasks/result':
      return registry.count('tasks', 'results');
    case 'tasks/cancel': {
      registry.count('tasks', 'cancels');
      const job = taskId === undefined ? undefined : registry.get(taskId);
      if (job?.contract === 'tasks') registry.countTag(job.args.tag, 'cancels');
      return;
    }
  }
}
