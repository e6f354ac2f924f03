import { GATEWAY_VERSION, isRecord } from '@app/common';
import { withTraceMeta } from '@app/tracing';
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  PROTOCOL_2026,
  TASKS_EXTENSION,
} from '@app/wire';
import type { OtherMessage } from './sse-answer.reader';
import type { RequestOptions, StatelessRequestOptions } from '../upstream.port';

/**
 * What every 2026-07-28 request carries, over HTTP and stdio alike (docs/connections.md, "MCP
 * 2026-07-28"): the `_meta` envelope that makes it self-describing, and the progress its ID asks
 * for.
 */

/** The stateless revision the 2026-07-28 clients speak. */
export const STATELESS_PROTOCOL_VERSION = PROTOCOL_2026;

const META_VERSION = META_PROTOCOL_VERSION;
const META_CAPABILITIES = META_CLIENT_CAPABILITIES;

/**
 * What the gateway can do for a server (docs/connections.md, "MCP 2026-07-28"): the tasks
 * extension, and questions in form mode, which a consumer answers through the API, the console or
 * `/mcp` (docs/contracts.md, "Questions: input_required"). Other kinds of question are relayed when
 * a server asks them anyway, but not declared: a consumer may be a person with no model to sample.
 */
const CLIENT_CAPABILITIES = Object.freeze({
  elicitation: { form: {} },
  extensions: { [TASKS_EXTENSION]: {} },
});
/** The same without the tasks extension: the server answers a call, and never makes a task. */
const WITHOUT_TASKS = Object.freeze({ elicitation: { form: {} } });

/** The `_meta` every 2026-07-28 request carries: version, client info, capabilities. */
export function envelope(tasks = true): Record<string, unknown> {
  return {
    [META_VERSION]: STATELESS_PROTOCOL_VERSION,
    [META_CLIENT_INFO]: { name: 'mcp-task-gateway', version: GATEWAY_VERSION },
    [META_CAPABILITIES]: tasks ? CLIENT_CAPABILITIES : WITHOUT_TASKS,
  };
}

/**
 * A request's params with its envelope in `_meta` (beside what the caller put there, and the
 * trace context); the request's ID is its progress token when progress is asked for: unique among
 * one client's requests.
 */
export function envelopedParams(
  params: Record<string, unknown>,
  options: StatelessRequestOptions,
  id: number,
): Record<string, unknown> {
  return withTraceMeta({
    ...params,
    _meta: {
      ...(isRecord(params._meta) ? params._meta : {}),
      ...envelope(options.withoutTasks !== true),
      ...(options.onProgress ? { progressToken: id } : {}),
    },
  });
}

/**
 * The `notifications/progress` of one request, handed to its `onProgress` (a callback that
 * throws is ignored: progress is advisory, the answer is what counts).
 */
export function progressOf(
  token: number,
  onProgress: RequestOptions['onProgress'],
): OtherMessage | undefined {
  if (!onProgress) return undefined;
  return (message) => {
    const params = message.params;
    if (message.method !== 'notifications/progress' || !isRecord(params)) return;
    const { progressToken, progress, total, message: text } = params;
    if (progressToken !== token || typeof progress !== 'number') return;
    try {
      onProgress({
        progress,
        ...(typeof total === 'number' ? { total } : {}),
        ...(typeof text === 'string' ? { message: text } : {}),
      });
    } catch {
      // See above.
    }
  };
}
