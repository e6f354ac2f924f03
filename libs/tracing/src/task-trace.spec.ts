// Guards tracing off by default: without startTracing every helper is a pass-through no-op.
import {
  currentTraceCarrier,
  runInTaskSpan,
  startSubmitSpan,
  withTraceHeaders,
  withTraceMeta,
} from './task-trace';

const stored = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };

it('stores no context at submit when tracing is off', () => {
  expect(startSubmitSpan({ traceparent: stored.traceparent })).toBeUndefined();
});

it('runs an attempt as is, adding nothing to its upstream requests', async () => {
  const params = { name: 'tool', _meta: { progressToken: 1 } };
  const init = { method: 'POST', headers: { accept: 'application/json' } };
  const seen = await runInTaskSpan('poller.poll', stored, { 'task.phase': 'poll' }, async () => ({
    carrier: currentTraceCarrier(),
    params: withTraceMeta(params),
    init: withTraceHeaders(init),
  }));
  expect(seen.carrier).toBeUndefined();
  expect(seen.params).toBe(params);
  expect(seen.init).toBe(init);
});

it('passes an attempt failure through unchanged', async () => {
  const failure = new Error('upstream down');
  await expect(
    runInTaskSpan('poller.submit', null, {}, () => Promise.reject(failure)),
  ).rejects.toBe(failure);
});
