// Guards the mapping of native MCP Tasks (revision 2025-11-25) onto the local task model.
import { TaskErrorCode, TaskStatus } from '@app/common';
import { parseCreateTaskReply, parseTask, resultSnapshot, taskSnapshot } from './mcp-task.parser';
import { LIMITS, permanentFailure } from './testing/fake-upstream';

const TASK = {
  taskId: 't1',
  status: 'working',
  ttl: 60000,
  createdAt: '2025-01-01T00:00:00Z',
  lastUpdatedAt: '2025-01-01T00:00:00Z',
};

describe('create reply', () => {
  it('reads the nested task, ignoring unknown fields', () => {
    expect(parseCreateTaskReply({ task: { ...TASK, pollInterval: 250, extra: 1 } })).toEqual({
      taskId: 't1',
      status: TaskStatus.Working,
      ttl: 60000,
      createdAt: Date.parse('2025-01-01T00:00:00Z'),
      pollInterval: 250,
    });
  });

  it('keeps a null ttl (unlimited) and a statusMessage', () => {
    expect(parseCreateTaskReply({ task: { ...TASK, ttl: null, statusMessage: 'm' } })).toEqual({
      taskId: 't1',
      status: TaskStatus.Working,
      ttl: null,
      createdAt: Date.parse('2025-01-01T00:00:00Z'),
      statusMessage: 'm',
    });
  });

  it('the TTL counts from createdAt: a working task is polled by then if pushed', () => {
    const created = Date.parse('2025-01-01T00:00:00Z');
    expect(taskSnapshot(parseCreateTaskReply({ task: TASK })).backstopAtMs).toBe(created + 60000);
    // No backstop without a TTL, or without a createdAt to count it from.
    expect(
      taskSnapshot(parseCreateTaskReply({ task: { ...TASK, ttl: null } })).backstopAtMs,
    ).toBeUndefined();
    const { createdAt: _dropped, ...undated } = TASK;
    expect(taskSnapshot(parseTask(undated, 'tasks/get')).backstopAtMs).toBeUndefined();
    expect(
      taskSnapshot(parseTask({ ...TASK, createdAt: 'yesterday' }, 'tasks/get')).backstopAtMs,
    ).toBeUndefined();
  });

  it('a plain CallToolResult (the tool ran synchronously) is a protocol_error', () => {
    const error = permanentFailure(() =>
      parseCreateTaskReply({ content: [{ type: 'text', text: 'done' }] }),
    );
    expect(error.code).toBe(TaskErrorCode.ProtocolError);
    expect(error.message).toMatch(/must nest the task as \{task: /);
  });

  it('an isError reply without a task is submit_rejected', () => {
    const reply = { content: [{ type: 'text', text: 'no tasks today' }], isError: true };
    const error = permanentFailure(() => parseCreateTaskReply(reply));
    expect(error.code).toBe(TaskErrorCode.SubmitRejected);
    expect(error.message).toBe('no tasks today');
  });
});

describe('Task fields', () => {
  it.each([
    [{ ...TASK, taskId: '' }, 'tasks/get: "taskId" must be a non-empty string'],
    [
      { ...TASK, status: 'running' },
      'tasks/get: "status" must be one of working, input_required, completed, failed, cancelled',
    ],
    [{ ...TASK, statusMessage: 5 }, 'tasks/get: "statusMessage" must be a string'],
    [{ ...TASK, ttl: 'long' }, 'tasks/get: "ttl" must be a number or null'],
    [{ ...TASK, pollInterval: 0 }, 'tasks/get: "pollInterval" must be a finite number > 0'],
  ])('refuses %j', (task, message) => {
    const error = permanentFailure(() => parseTask(task, 'tasks/get'));
    expect(error.code).toBe(TaskErrorCode.ProtocolError);
    expect(error.message).toBe(message);
  });
});

describe('snapshots', () => {
  it('working carries the pollInterval (ms) as the poll hint and clears the question', () => {
    const task = parseTask({ ...TASK, pollInterval: 1500 }, 'tasks/get');
    expect(taskSnapshot(task)).toEqual({
      status: TaskStatus.Working,
      pollAfterMs: 1500,
      inputRequired: null,
      backstopAtMs: Date.parse('2025-01-01T00:00:00Z') + 60000,
    });
  });

  it('input_required shows the statusMessage as one question that cannot be answered', () => {
    const task = parseTask({ ...TASK, status: 'input_required', statusMessage: 'Confirm?' }, 'x');
    const snapshot = taskSnapshot(task);
    expect(snapshot.status).toBe(TaskStatus.InputRequired);
    const stored = snapshot.inputRequired as { requests: object; answerable: boolean };
    expect(stored.answerable).toBe(false);
    expect(Object.values(stored.requests)).toEqual([
      { method: 'elicitation/create', params: { mode: 'form', message: 'Confirm?' } },
    ]);
  });

  it('cancelled needs no result', () => {
    expect(taskSnapshot(parseTask({ ...TASK, status: 'cancelled' }, 'x')).status).toBe(
      TaskStatus.Cancelled,
    );
  });

  it('completed stores the CallToolResult without _meta under the bounds', () => {
    const task = parseTask({ ...TASK, status: 'completed' }, 'x');
    const reply = {
      content: [{ type: 'text', text: '{"ok":true}' }],
      structuredContent: { ok: true },
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't1' } },
    };
    expect(resultSnapshot(task, reply, LIMITS)).toEqual({
      status: TaskStatus.Completed,
      inputRequired: null,
      result: {
        value: { content: reply.content, structuredContent: { ok: true } },
        preview: null,
        truncated: false,
      },
    });
  });

  it('a result over the bound is a preview', () => {
    const task = parseTask({ ...TASK, status: 'completed' }, 'x');
    const reply = { content: [{ type: 'text', text: 'x'.repeat(5000) }] };
    expect(resultSnapshot(task, reply, LIMITS).result).toEqual({
      value: null,
      preview: '{"content":[{"type":',
      truncated: true,
    });
  });

  it('failed keeps the statusMessage and the isError text as upstream_failed', () => {
    const task = parseTask({ ...TASK, status: 'failed', statusMessage: 'Tool failed' }, 'x');
    const reply = { content: [{ type: 'text', text: 'disk full' }], isError: true };
    expect(resultSnapshot(task, reply, LIMITS).error).toEqual({
      code: TaskErrorCode.UpstreamFailed,
      message: 'Tool failed: disk full',
    });
  });

  it('a completed task whose result has isError ends failed with the result kept', () => {
    const task = parseTask({ ...TASK, status: 'completed' }, 'x');
    const reply = { content: [{ type: 'text', text: 'bad input' }], isError: true };
    expect(resultSnapshot(task, reply, LIMITS)).toEqual({
      status: TaskStatus.Failed,
      inputRequired: null,
      result: { value: reply, preview: null, truncated: false },
      error: { code: TaskErrorCode.UpstreamFailed, message: 'bad input' },
    });
  });

  it('a tasks/result that is not an object is a protocol_error', () => {
    const task = parseTask({ ...TASK, status: 'completed' }, 'x');
    expect(permanentFailure(() => resultSnapshot(task, 'done', LIMITS)).code).toBe(
      TaskErrorCode.ProtocolError,
    );
  });
});
