import { taskPhase } from './task-2026-timeline.util';
import type { TaskPlan, TaskRecord2026 } from './task-2026.types';
import { ask, textResult } from './tool-2026.util';

const T0 = 1_000_000;

function task(
  plan: Partial<TaskPlan>,
  answers: Record<string, number> = {},
  cancelledAt?: number,
): TaskRecord2026 {
  return {
    taskId: 't',
    createdAt: T0,
    plan: {
      workMs: 100,
      resumeMs: 50,
      finish: (given) => ({ status: 'completed', result: textResult(JSON.stringify(given)) }),
      ttlMs: 60_000,
      pollIntervalMs: 100,
      ...plan,
    },
    answers: new Map(Object.entries(answers).map(([key, at]) => [key, { response: { key }, at }])),
    cancelledAt,
  };
}

const TWO = { a: ask('A?', 'a', { type: 'string' }), b: ask('B?', 'b', { type: 'string' }) };

describe('taskPhase', () => {
  it('works, then ends with the plan result at createdAt + workMs', () => {
    expect(taskPhase(task({}), T0 + 99)).toEqual({ status: 'working', since: T0 });
    expect(taskPhase(task({}), T0 + 100)).toMatchObject({ status: 'completed', since: T0 + 100 });
  });

  it('asks every question at once and keeps asking the unanswered ones', () => {
    expect(taskPhase(task({ questions: TWO }), T0 + 50).status).toBe('working');
    expect(taskPhase(task({ questions: TWO }), T0 + 10_000)).toEqual({
      status: 'input_required',
      since: T0 + 100,
      pending: ['a', 'b'],
    });
    const partial = task({ questions: TWO }, { a: T0 + 500 });
    expect(taskPhase(partial, T0 + 600)).toEqual({
      status: 'input_required',
      since: T0 + 500,
      pending: ['b'],
    });
  });

  it('resumes after the last answer and finishes with the answers', () => {
    const answered = task({ questions: TWO }, { a: T0 + 500, b: T0 + 700 });
    expect(taskPhase(answered, T0 + 720)).toEqual({ status: 'working', since: T0 + 700 });
    const done = taskPhase(answered, T0 + 750);
    expect(done).toMatchObject({ status: 'completed', since: T0 + 750 });
    expect(done.ending).toMatchObject({
      result: { content: [{ text: '{"a":{"key":"a"},"b":{"key":"b"}}' }] },
    });
  });

  it('lets a cancel win only before the end', () => {
    expect(taskPhase(task({}, {}, T0 + 50), T0 + 1000)).toEqual({
      status: 'cancelled',
      since: T0 + 50,
    });
    expect(taskPhase(task({}, {}, T0 + 150), T0 + 1000).status).toBe('completed');
    expect(taskPhase(task({ questions: TWO }, {}, T0 + 9_999), T0 + 10_000).status).toBe(
      'cancelled',
    );
  });
});
