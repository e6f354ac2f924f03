/** The prefix of a request ID the front door gives a task's question it sends to a client. */
const PREFIX = 'gateway-input:';

/**
 * The JSON-RPC ID of a task's question sent to a 2025-11-25 client (`elicitation/create`, …):
 * the task and the question's key, so that the client's answer can land on any replica with no
 * memory of the request. It grants nothing: the answer is checked against the caller's tasks.
 */
export function inputRequestId(taskId: string, key: string): string {
  return `${PREFIX}${Buffer.from(JSON.stringify([taskId, key]), 'utf8').toString('base64url')}`;
}

/** The task and key an answer's ID names; null for an ID the front door never sent. */
export function parseInputRequestId(id: unknown): { taskId: string; key: string } | null {
  if (typeof id !== 'string' || !id.startsWith(PREFIX) || id.length > 1024) return null;
  try {
    const pair: unknown = JSON.parse(Buffer.from(id.slice(PREFIX.length), 'base64url').toString());
    if (!Array.isArray(pair) || pair.length !== 2) return null;
    const [taskId, key] = pair as unknown[];
    return typeof taskId === 'string' && typeof key === 'string' ? { taskId, key } : null;
  } catch {
    return null;
  }
}
