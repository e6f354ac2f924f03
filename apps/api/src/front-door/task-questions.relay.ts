import { isTerminal, isRecord } from '@app/common';
import { TaskRow } from '@app/persistence';

import { InputRequiredView, acceptsAnswers, inputRequiredView } from '@app/views';
import { inputRequestId } from './input-request.id';
import { McpCall } from './mcp-call.context';
import { McpTaskAccess } from './mcp-task-access.service';

/** The `_meta` key that ties a message to a task (2025-11-25). */
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';

type InputRequest = InputRequiredView['requests'][string];

/**
 * Waits for the task to end (up to `maxMs`, or until the client goes away) and, meanwhile, sends
 * each question it asks to the client as the request it is (`elicitation/create`, …), once per
 * key, on the call's SSE answer, when the client accepts one and the upstream takes answers. The
 * client's response comes back as a POST (Mcp2025Handler.clientResponse). `related` adds the
 * related-task `_meta` (on `tasks/result`; a held call's client knows no task). Answers the
 * task as last read.
 */
export async function waitRelayingQuestions(
  access: McpTaskAccess,
  task: TaskRow,
  call: McpCall,
  maxMs: number,
  related: boolean,
): Promise<TaskRow> {
  const deadline = Date.now() + maxMs;
  const asked = new Set<string>();
  const unasked = (row: TaskRow): [string, InputRequest][] =>
    call.relaysQuestions && call.channel?.canStream && acceptsAnswers(row)
      ? Object.entries(inputRequiredView(row)?.requests ?? {}).filter(([key]) => !asked.has(key))
      : [];
  let row = task;
  for (;;) {
    row = await access.waitFor(
      row,
      (r) => unasked(r).length > 0,
      call.abort,
      deadline - Date.now(),
    );
    const questions = isTerminal(row.status) ? [] : unasked(row);
    if (questions.length === 0) return row;
    for (const [key, request] of questions) {
      asked.add(key);
      call.channel!.send({
        id: inputRequestId(row.id, key),
        method: request.method,
        params: related ? withRelatedTask(request.params, row.id) : request.params,
      });
    }
  }
}

/** A question's params with the related-task `_meta` every task message carries (2025-11-25). */
function withRelatedTask(params: Record<string, unknown>, taskId: string): Record<string, unknown> {
  const meta = isRecord(params._meta) ? params._meta : {};
  return { ...params, _meta: { ...meta, [RELATED_TASK]: { taskId } } };
}
