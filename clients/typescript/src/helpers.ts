import type { paths } from './schema';
import { GatewayClient, Task, TaskSummary, unwrap } from './client';

type SubmitBody =
  paths['/v1/threads/{thread_id}/tasks']['post']['requestBody']['content']['application/json'];
type ListQuery = NonNullable<paths['/v1/tasks']['get']['parameters']['query']>;

/** The statuses a task ends in. */
export const TERMINAL_STATUSES: readonly string[] = ['completed', 'failed', 'cancelled'];

export interface SubmitAndWaitOptions {
  threadId: string;
  body: SubmitBody;
  /** Makes the submit safe to retry: the same key and body answer the same task. */
  idempotencyKey?: string;
  /** Give up (throw) after this long; 10 minutes by default. */
  timeoutMs?: number;
  /** Also stop when the task asks a question (`input_required`); true by default. */
  stopOnQuestion?: boolean;
  signal?: AbortSignal;
}

/**
 * Submits a task and waits until it ends (or asks a question): the submit holds the answer up to
 * 30 s with `Prefer: wait`; a task still running then is read again after a pause that grows
 * from 250 ms to 5 s, until it is done. Returns the task as it is then.
 */
export async function submitAndWait(
  client: GatewayClient,
  options: SubmitAndWaitOptions,
): Promise<Task> {
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  const stopOnQuestion = options.stopOnQuestion ?? true;
  const done = (task: Task): boolean =>
    TERMINAL_STATUSES.includes(task.status) || (stopOnQuestion && task.status === 'input_required');
  let task = unwrap(
    await client.POST('/v1/threads/{thread_id}/tasks', {
      params: {
        path: { thread_id: options.threadId },
        header: {
          Prefer: 'wait=30',
          ...(options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {}),
        },
      },
      body: options.body,
      signal: options.signal,
    }),
  );
  let pauseMs = 250;
  while (!done(task)) {
    if (Date.now() > deadline) throw new Error(`task ${task.task_id} still ${task.status}`);
    await sleep(pauseMs, options.signal);
    pauseMs = Math.min(pauseMs * 2, 5_000);
    task = unwrap(
      await client.GET('/v1/tasks/{task_id}', {
        params: { path: { task_id: task.task_id } },
        signal: options.signal,
      }),
    );
  }
  return task;
}

/**
 * Every task of the caller that matches `query` (`GET /v1/tasks`), newest first, following
 * `next_cursor` page after page with the same filters.
 */
export async function* listAllTasks(
  client: GatewayClient,
  query: Omit<ListQuery, 'cursor'> = {},
): AsyncGenerator<TaskSummary> {
  let cursor: string | undefined;
  do {
    const page = unwrap(
      await client.GET('/v1/tasks', {
        params: { query: { ...query, ...(cursor ? { cursor } : {}) } },
      }),
    );
    yield* page.items;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
}

/**
 * Answers some or all of a task's open questions (`POST …/input`); each answer is the result of
 * its request, e.g. `{ action: 'accept', content: {…} }` for an elicitation.
 */
export async function answerQuestion(
  client: GatewayClient,
  task: Pick<Task, 'task_id' | 'thread_id'>,
  responses: Record<string, Record<string, unknown>>,
): Promise<Task> {
  return unwrap(
    await client.POST('/v1/threads/{thread_id}/tasks/{task_id}/input', {
      params: { path: { thread_id: task.thread_id, task_id: task.task_id } },
      body: { responses },
    }),
  );
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });
}
