import { ErrorCode2026 } from '@app/wire';
import { QUOTA_EXCEEDED_CODE, REFUSED_CODE, refusalError } from '../front-door/refusal-errors';
import { PROBLEM_TYPE_BASE } from '../problem/problem-kinds';
import { refusalProblem } from '../problem/refusal-problems';
import * as refusals from './refusal';
import {
  AnyRefusal,
  AnswerConflict,
  Forbidden,
  Gone,
  IDEMPOTENCY_KEY_FIELD,
  IdempotencyConflict,
  InvalidArguments,
  LimitReached,
  MalformedRequest,
  NotAnswerable,
  NotFound,
  NotReady,
  NotRetryable,
  OperatorConflict,
  PayloadTooLarge,
  QuotaExceeded,
  RateLimited,
  Refusal,
  TaskChanged,
  TaskEnded,
  Unauthenticated,
  UnknownQueryParameter,
  UnknownToolset,
  UnsupportedMediaType,
} from './refusal';

/** One refusal of every kind, with what each edge answers for it (docs/refusals.md). */
const CASES: [AnyRefusal, { status: number; slug: string }, { code: number; message?: string }][] =
  [
    [
      new MalformedRequest('Invalid task ID.'),
      { status: 400, slug: 'bad-request' },
      { code: -32602 },
    ],
    [
      new UnknownQueryParameter(['x']),
      { status: 400, slug: 'unknown-parameter' },
      { code: -32602 },
    ],
    [new Unauthenticated(), { status: 401, slug: 'unauthorized' }, { code: REFUSED_CODE }],
    [new Forbidden('No.'), { status: 403, slug: 'forbidden' }, { code: REFUSED_CODE }],
    [
      new NotFound('No such task.'),
      { status: 404, slug: 'not-found' },
      { code: -32602, message: 'Failed to retrieve task: Task not found' },
    ],
    [new OperatorConflict('Refused.'), { status: 409, slug: 'conflict' }, { code: REFUSED_CODE }],
    [
      new TaskEnded('completed'),
      { status: 409, slug: 'task-ended' },
      { code: -32602, message: 'Cannot cancel task: it is already completed' },
    ],
    [new NotAnswerable('No.'), { status: 409, slug: 'not-answerable' }, { code: REFUSED_CODE }],
    [new AnswerConflict('No.'), { status: 409, slug: 'answer-conflict' }, { code: REFUSED_CODE }],
    [new TaskChanged(), { status: 409, slug: 'task-changed' }, { code: REFUSED_CODE }],
    [new NotRetryable('working'), { status: 409, slug: 'not-retryable' }, { code: REFUSED_CODE }],
    [new Gone('Expired.'), { status: 410, slug: 'answer-link-gone' }, { code: REFUSED_CODE }],
    [new PayloadTooLarge('Big.'), { status: 413, slug: 'payload-too-large' }, { code: -32602 }],
    [
      new UnsupportedMediaType('Not JSON.'),
      { status: 415, slug: 'unsupported-media-type' },
      { code: -32602 },
    ],
    [
      new InvalidArguments('The arguments do not fit.', [{ path: '/arguments/n', message: 'bad' }]),
      { status: 422, slug: 'validation' },
      { code: -32602, message: 'The arguments do not fit.; /arguments/n bad' },
    ],
    [
      new UnknownToolset('is not a toolset'),
      { status: 422, slug: 'unknown-toolset' },
      { code: -32602, message: 'Unknown toolset.; /toolset is not a toolset' },
    ],
    [
      new IdempotencyConflict('This Idempotency-Key was used.', 'was already used'),
      { status: 422, slug: 'idempotency-conflict' },
      { code: -32602, message: '_meta["mcp-task-gateway/idempotencyKey"] was already used' },
    ],
    [
      new LimitReached('At most 2.'),
      { status: 422, slug: 'limit-reached' },
      { code: REFUSED_CODE },
    ],
    [new RateLimited('Too many.', 3), { status: 429, slug: 'rate-limited' }, { code: -32029 }],
    [
      new QuotaExceeded('active_tasks', 'Too many active tasks.', 5),
      { status: 429, slug: 'quota-exceeded' },
      { code: QUOTA_EXCEEDED_CODE, message: 'Too many active tasks.' },
    ],
    [new NotReady('Draining.'), { status: 503, slug: 'not-ready' }, { code: REFUSED_CODE }],
  ];

describe('refusals', () => {
  it('has a case above for every refusal class the core exports', () => {
    const classes = Object.values(refusals).filter(
      (value): value is typeof Refusal =>
        typeof value === 'function' && value.prototype instanceof Refusal,
    );
    expect(classes.length).toBeGreaterThan(15);
    expect(new Set(CASES.map(([refusal]) => refusal.constructor))).toEqual(new Set(classes));
  });

  it.each(CASES.map((c) => [c[0].constructor.name, ...c] as const))(
    '%s answers its problem type on /v1 and its JSON-RPC error on /mcp',
    (_name, refusal, problem, error) => {
      const answer = refusalProblem(refusal);
      expect(answer.body).toMatchObject({
        type: PROBLEM_TYPE_BASE + problem.slug,
        status: problem.status,
        detail: refusal.detail,
      });
      const wire = refusalError(refusal).toJson();
      expect(wire.code).toBe(error.code);
      expect(wire.message).toBe(error.message ?? wire.message);
      if (error.code === REFUSED_CODE) expect(wire.message).toBe(refusal.detail);
    },
  );

  it('carries the delay and the quota to both edges', () => {
    const quota = new QuotaExceeded('submits_per_minute', 'Too many submits.', 6);
    expect(refusalProblem(quota)).toEqual({
      body: expect.objectContaining({ quota: 'submits_per_minute', retry_after_seconds: 6 }),
      headers: { 'Retry-After': '6' },
    });
    expect(refusalError(quota).toJson()).toEqual({
      code: -32029,
      message: 'Too many submits.',
      data: { quota: 'submits_per_minute', retryAfterSeconds: 6 },
    });
    const held = new RateLimited('Too many held calls.', 4, 'held_calls');
    expect(refusalProblem(held).headers).toEqual({ 'Retry-After': '4' });
    expect(refusalProblem(held).body).not.toHaveProperty('quota');
    expect(refusalError(held).toJson().data).toEqual({ quota: 'held_calls', retryAfterSeconds: 4 });
  });

  it('names each failing field on both edges, as each edge spells it', () => {
    const key = new MalformedRequest('Invalid Idempotency-Key header.', [
      { path: IDEMPOTENCY_KEY_FIELD, message: 'must be 1 to 255 printable ASCII characters' },
    ]);
    expect(refusalProblem(key).body.errors).toEqual([
      { path: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' },
    ]);
    const meta = '_meta["mcp-task-gateway/idempotencyKey"]';
    expect(refusalError(key).toJson()).toEqual({
      code: ErrorCode2026.InvalidParams,
      message: `${meta} must be 1 to 255 printable ASCII characters`,
      data: { errors: [{ path: meta, message: 'must be 1 to 255 printable ASCII characters' }] },
    });
  });

  it('challenges a failed authentication with the scheme the caller is told', () => {
    expect(refusalProblem(new Unauthenticated()).headers).toEqual({ 'WWW-Authenticate': 'Bearer' });
    const challenge = 'Bearer resource_metadata="https://gw.test/.well-known/x"';
    expect(refusalProblem(new Unauthenticated(challenge)).headers).toEqual({
      'WWW-Authenticate': challenge,
    });
  });
});
