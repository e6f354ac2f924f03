// Guards every row of the `ordinary` contract table (contracts.md): the good case and each break.
import { TaskErrorCode, TaskStatus, TransientTaskError, type TaskSnapshot } from '@app/common';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { parseStatusAnswer, parseSubmitAnswer } from './ordinary-answer.parser';
import { LIMITS, permanentFailure, structured, toolError } from './testing/fake-upstream';

const ID = 'job_1';

function status(answer: Record<string, unknown>, op: 'status' | 'cancel' = 'status'): TaskSnapshot {
  return parseStatusAnswer(structured({ task_id: ID, ...answer }), ID, LIMITS, op);
}

function broken(run: () => unknown, message: string): void {
  const error = permanentFailure(run);
  expect(error.code).toBe(TaskErrorCode.ProtocolError);
  expect(error.message).toBe(message);
}

describe('ordinary submit answer', () => {
  it('accepts {task_id, status: "running"} and ignores extra fields', () => {
    expect(parseSubmitAnswer(structured({ task_id: ID, status: 'running', eta: 5 }))).toBe(ID);
  });

  it('isError is submit_rejected with the first text block', () => {
    const error = permanentFailure(() => parseSubmitAnswer(toolError('quota exceeded')));
    expect(error.code).toBe(TaskErrorCode.SubmitRejected);
    expect(error.message).toBe('quota exceeded');
  });

  it('text only (no structuredContent) is a protocol_error: text is never parsed', () => {
    const text: CallToolResult = {
      content: [{ type: 'text', text: '{"task_id":"job_1","status":"running"}' }],
    };
    broken(
      () => parseSubmitAnswer(text),
      'submit: the result must carry structuredContent {task_id, status: "running"} (text content is never parsed)',
    );
  });

  it.each([
    [{ id: ID, status: 'running' }, 'submit: "task_id" must be a non-empty string'],
    [{ task_id: '', status: 'running' }, 'submit: "task_id" must be a non-empty string'],
    [{ task_id: 7, status: 'running' }, 'submit: "task_id" must be a non-empty string'],
    [{ task_id: ID, status: 'queued' }, 'submit: "status" must be "running"'],
    [{ task_id: ID }, 'submit: "status" must be "running"'],
  ])('refuses %j', (answer, message) => {
    broken(() => parseSubmitAnswer(structured(answer)), message);
  });
});

describe('ordinary status answer, row by row', () => {
  it('task_id: must equal the stored remote ID', () => {
    expect(status({ status: 'running' }).status).toBe(TaskStatus.Working);
    broken(
      () => parseStatusAnswer(structured({ task_id: 'other', status: 'running' }), ID, LIMITS),
      'status: "task_id" must equal the submitted task\'s ID',
    );
  });

  it.each([
    ['running', TaskStatus.Working],
    ['completed', TaskStatus.Completed],
    ['failed', TaskStatus.Failed],
    ['cancelled', TaskStatus.Cancelled],
  ])('status: %s maps to %s', (word, local) => {
    expect(status({ status: word }).status).toBe(local);
  });

  it.each(['weird', 'working', 7, undefined])('status: %p is a protocol_error', (word) => {
    broken(
      () => status({ status: word }),
      'status: "status" must be one of running, input_required, completed, failed, cancelled',
    );
  });

  it('result: any JSON, stored under the bounds on a terminal status', () => {
    expect(status({ status: 'completed', result: [1, 'a'] }).result).toEqual({
      value: [1, 'a'],
      preview: null,
      truncated: false,
    });
    const big = status({ status: 'completed', result: { x: 'y'.repeat(2000) } }).result;
    expect(big).toEqual({ value: null, preview: '{"x":"yyyyyyyyyyyyyy', truncated: true });
    expect(status({ status: 'completed', result: null }).result?.value).toBeNull();
    expect(status({ status: 'completed' }).result).toBeUndefined();
  });

  it('result_artifact: {uri, mime_type} non-empty strings', () => {
    const artifact = { uri: 'demo://a', mime_type: 'application/json' };
    expect(
      status({ status: 'completed', result_artifact: { ...artifact, size: 3 } }),
    ).toMatchObject({ resultArtifact: artifact });
    const rule = 'status: "result_artifact" must be {uri, mime_type} with both non-empty strings';
    broken(() => status({ status: 'completed', result_artifact: { uri: 'demo://a' } }), rule);
    broken(() => status({ status: 'completed', result_artifact: { ...artifact, uri: '' } }), rule);
    broken(() => status({ status: 'completed', result_artifact: 'demo://a' }), rule);
  });

  it('result_artifact: over 65,536 bytes of JSON is a protocol_error', () => {
    const huge = { uri: `demo://${'a'.repeat(70_000)}`, mime_type: 'text/plain' };
    const error = permanentFailure(() => status({ status: 'completed', result_artifact: huge }));
    expect(error.code).toBe(TaskErrorCode.ProtocolError);
    expect(error.message).toMatch(
      /^status: "result_artifact" is \d+ bytes of JSON, over the 65536-byte bound$/,
    );
  });

  it('error: the failure text, kept as upstream_failed (bounded to 4,000)', () => {
    expect(status({ status: 'failed', error: 'disk full' }).error).toEqual({
      code: TaskErrorCode.UpstreamFailed,
      message: 'disk full',
    });
    expect(status({ status: 'failed', error: 'e'.repeat(9000) }).error?.message).toHaveLength(4000);
    expect(status({ status: 'failed' }).error?.message).toMatch(/without a message/);
    broken(
      () => status({ status: 'failed', error: { text: 'x' } }),
      'status: "error" must be a string',
    );
  });

  it('error_code: "task_not_found" is upstream_task_lost, permanent', () => {
    const error = permanentFailure(() =>
      status({ status: 'failed', error_code: 'task_not_found', error: 'forgotten' }),
    );
    expect(error.code).toBe(TaskErrorCode.UpstreamTaskLost);
    expect(error.message).toBe('upstream no longer knows task job_1: forgotten');
    expect(status({ status: 'running', error_code: 'something_else' }).status).toBe(
      TaskStatus.Working,
    );
  });

  it('input_required: object, required when status is input_required', () => {
    const snapshot = status({ status: 'input_required', input_required: { question: 'ok?' } });
    // One shape for every contract: a free-form question is one elicitation, keyed by its text.
    expect(snapshot.status).toBe(TaskStatus.InputRequired);
    const { requests } = snapshot.inputRequired as { requests: Record<string, unknown> };
    expect(Object.keys(requests)).toEqual([expect.stringMatching(/^q-[0-9a-f]{16}$/)]);
    expect(Object.values(requests)).toEqual([
      {
        method: 'elicitation/create',
        params: { mode: 'form', message: 'ok?', question: { question: 'ok?' } },
      },
    ]);
    // The same question keeps its key across polls; another one gets a new key.
    const again = status({ status: 'input_required', input_required: { question: 'ok?' } });
    const other = status({ status: 'input_required', input_required: { question: 'sure?' } });
    expect(Object.keys((again.inputRequired as { requests: object }).requests)).toEqual(
      Object.keys(requests),
    );
    expect(Object.keys((other.inputRequired as { requests: object }).requests)).not.toEqual(
      Object.keys(requests),
    );
    const rule = 'status: "input_required" must be an object when status is "input_required"';
    broken(() => status({ status: 'input_required' }), rule);
    broken(() => status({ status: 'input_required', input_required: 'ok?' }), rule);
    expect(status({ status: 'running' }).inputRequired).toBeNull();
  });

  it('input_required: over 65,536 bytes of JSON is a protocol_error', () => {
    const huge = { question: 'q', padding: 'x'.repeat(70_000) };
    const error = permanentFailure(() =>
      status({ status: 'input_required', input_required: huge }),
    );
    expect(error.message).toMatch(/^status: "input_required" is \d+ bytes of JSON/);
  });

  it('poll_after_seconds: finite and > 0, returned in ms unclamped', () => {
    expect(status({ status: 'running', poll_after_seconds: 0.5 }).pollAfterMs).toBe(500);
    expect(status({ status: 'running', poll_after_seconds: 172800 }).pollAfterMs).toBe(172_800_000);
    for (const bad of [-1, 0, '3']) {
      broken(
        () => status({ status: 'running', poll_after_seconds: bad }),
        'status: "poll_after_seconds" must be a finite number > 0',
      );
    }
  });

  it('progress: {current?, total?, message?}, message cut to 500', () => {
    const snapshot = status({
      status: 'running',
      progress: { current: 1, total: 4, message: 'm'.repeat(800) },
    });
    expect(snapshot.progress).toEqual({ current: 1, total: 4, message: 'm'.repeat(500) });
    broken(
      () => status({ status: 'running', progress: { current: 'one' } }),
      'status: "progress".current must be a finite number',
    );
  });

  it('unknown extra fields are ignored', () => {
    expect(status({ status: 'running', shiny: { nested: true } })).toEqual({
      status: TaskStatus.Working,
      inputRequired: null,
    });
  });

  it('text content is never parsed as the protocol', () => {
    const text: CallToolResult = { content: [{ type: 'text', text: '{"task_id":"job_1"}' }] };
    broken(
      () => parseStatusAnswer(text, ID, LIMITS),
      'status: the result must carry structuredContent {task_id, status, ...} (text content is never parsed)',
    );
  });

  it('isError is transient with the first text block cut to 500', () => {
    const run = (): unknown => parseStatusAnswer(toolError('z'.repeat(700)), ID, LIMITS);
    expect(run).toThrow(TransientTaskError);
    expect(run).toThrow('z'.repeat(500));
    try {
      run();
    } catch (error) {
      expect((error as Error).message).toHaveLength(500);
    }
  });
});

describe('ordinary cancel answer', () => {
  it.each([
    ['cancelled', TaskStatus.Cancelled],
    ['completed', TaskStatus.Completed],
    ['failed', TaskStatus.Failed],
  ])('keeps the real final state %s', (word, local) => {
    expect(status({ status: word }, 'cancel').status).toBe(local);
  });

  it('a finished task stays finished, with its result', () => {
    expect(status({ status: 'completed', result: { ok: true } }, 'cancel')).toMatchObject({
      status: TaskStatus.Completed,
      result: { value: { ok: true } },
    });
  });

  it.each(['running', 'input_required'])('status %s is a protocol_error', (word) => {
    broken(
      () => status({ status: word, input_required: {} }, 'cancel'),
      'cancel: "status" must be the final state: cancelled, completed or failed',
    );
  });

  it('task_id must match and isError is transient', () => {
    broken(
      () =>
        parseStatusAnswer(structured({ task_id: 'x', status: 'cancelled' }), ID, LIMITS, 'cancel'),
      'cancel: "task_id" must equal the submitted task\'s ID',
    );
    expect(() => parseStatusAnswer(toolError('busy'), ID, LIMITS, 'cancel')).toThrow(
      new TransientTaskError('busy'),
    );
  });
});
