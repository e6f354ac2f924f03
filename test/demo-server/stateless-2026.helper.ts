// A bare MCP 2026-07-28 client for the demo tests: one fetch per request, headers and _meta set.
import { request2026, type Request2026Options } from '../helpers/mcp-2026';

export { TASKS_EXTENSION } from '../helpers/mcp-2026';

export interface Options2026 extends Request2026Options {
  /** Header overrides; a value of null removes that header. */
  headers?: Record<string, string | null>;
  /** The endpoint's path; default /mcp. */
  path?: string;
}

export interface Answer2026 {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests index into answers freely
  result?: Record<string, any>;
  error?: { code: number; message: string; data?: unknown };
}

export async function post2026(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  options: Options2026 = {},
): Promise<Answer2026> {
  const request = request2026(method, params, options);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...request.headers,
  };
  for (const [key, value] of Object.entries(options.headers ?? {})) {
    if (value === null) delete headers[key.toLowerCase()];
    else headers[key.toLowerCase()] = value;
  }
  const response = await fetch(`${url}${options.path ?? '/mcp'}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(request.body),
  });
  const json = (await response.json()) as Omit<Answer2026, 'status'>;
  return { status: response.status, result: json.result, error: json.error };
}

/** The result of a request that must succeed; a JSON-RPC error fails the test with its text. */
export async function ok2026(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  options: Options2026 = {},
): Promise<NonNullable<Answer2026['result']>> {
  const answer = await post2026(url, method, params, options);
  if (!answer.result) throw new Error(`${method} failed: ${JSON.stringify(answer)}`);
  return answer.result;
}

export const callTool = (
  url: string,
  name: string,
  args: Record<string, unknown> = {},
  extra = {},
) => ok2026(url, 'tools/call', { name, arguments: args, ...extra });

export const getTask = (url: string, taskId: string) => ok2026(url, 'tasks/get', { taskId });
