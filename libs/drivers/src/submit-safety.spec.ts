// Guards submit safety: only a submit proven unsent is retried; a maybe-sent one is never repeated silently.
import { PermanentTaskError, TaskErrorCode, TransientTaskError } from '@app/common';
import {
  UpstreamConnectionError,
  UpstreamProtocolError,
  UpstreamRpcError,
  UpstreamSessionExpiredError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '@app/upstream';
import { CallAbortedError } from './driver.errors';
import { classifyPollError, classifySubmitError } from './submit-safety';

const SAFE = { retryOnCrash: true };
const UNSAFE = { retryOnCrash: false };

function code(error: Error): string {
  return error instanceof PermanentTaskError ? error.code : error.constructor.name;
}

describe('classifySubmitError', () => {
  it.each([
    ['unavailable (nothing sent)', new UpstreamUnavailableError('s', 'parked', 'ENOENT')],
    ['connection refused before sending', new UpstreamConnectionError('s', 'refused', false)],
    ['session expired (404, not processed)', new UpstreamSessionExpiredError('s')],
  ])('%s → transient, retried', (_label, error) => {
    expect(classifySubmitError(error, UNSAFE)).toBeInstanceOf(TransientTaskError);
  });

  it.each([
    ['timeout after sending', new UpstreamTimeoutError('s', 1000)],
    ['connection lost while sending', new UpstreamConnectionError('s', 'reset', true)],
    ['an error of unknown kind', new Error('boom')],
  ])('%s → outcome_uncertain, or transient with retryOnCrash', (_label, error) => {
    const unsafe = classifySubmitError(error, UNSAFE);
    expect(code(unsafe)).toBe(TaskErrorCode.OutcomeUncertain);
    expect(unsafe.message).toMatch(/^submit may have reached the upstream without an answer/);
    expect(classifySubmitError(error, SAFE)).toBeInstanceOf(TransientTaskError);
  });

  it('a JSON-RPC error is submit_rejected even with retryOnCrash: the upstream saw it', () => {
    expect(code(classifySubmitError(new UpstreamRpcError('s', -32602, 'bad'), SAFE))).toBe(
      TaskErrorCode.SubmitRejected,
    );
  });

  it('an invalid MCP answer is a protocol_error', () => {
    expect(code(classifySubmitError(new UpstreamProtocolError('s', 'zod'), SAFE))).toBe(
      TaskErrorCode.ProtocolError,
    );
  });

  it('an abort by the poller is CallAbortedError, whatever the error', () => {
    const controller = new AbortController();
    controller.abort();
    expect(
      classifySubmitError(new UpstreamTimeoutError('s', 1), UNSAFE, controller.signal),
    ).toBeInstanceOf(CallAbortedError);
  });

  it('typed task errors pass through unchanged', () => {
    const error = new PermanentTaskError(TaskErrorCode.ProtocolError, 'x');
    expect(classifySubmitError(error, SAFE)).toBe(error);
  });
});

describe('classifyPollError', () => {
  it.each([
    new UpstreamTimeoutError('s', 1),
    new UpstreamConnectionError('s', 'reset', true),
    new UpstreamRpcError('s', -32603, 'internal'),
    new UpstreamUnavailableError('s', 'degraded', 'x'),
  ])('%p is transient: polls are idempotent', (error) => {
    const classified = classifyPollError(error, 'status');
    expect(classified).toBeInstanceOf(TransientTaskError);
    expect(classified.message).toMatch(/^status failed: /);
  });

  it('an invalid MCP answer is a protocol_error', () => {
    expect(code(classifyPollError(new UpstreamProtocolError('s', 'zod'), 'status'))).toBe(
      TaskErrorCode.ProtocolError,
    );
  });
});
