// Guards the small bounds: progress, poll hints, error texts and remote IDs.
import { PermanentTaskError, TaskErrorCode } from '@app/common';
import {
  boundErrorMessage,
  lastErrorText,
  parseProgress,
  pollHintMs,
  remoteIdProblem,
} from './snapshot-fields';

function protocolMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect((error as PermanentTaskError).code).toBe(TaskErrorCode.ProtocolError);
    return (error as Error).message;
  }
  throw new Error('expected a protocol_error');
}

describe('parseProgress', () => {
  it('keeps current, total and message; ignores unknown members', () => {
    expect(parseProgress({ current: 3, total: 10, message: 'hi', extra: 1 }, 'p')).toEqual({
      current: 3,
      total: 10,
      message: 'hi',
    });
  });

  it('accepts an empty object and nulls as absent', () => {
    expect(parseProgress({ current: null }, 'p')).toEqual({});
  });

  it('cuts the message to 500 chars', () => {
    expect(parseProgress({ message: 'm'.repeat(600) }, 'p').message).toHaveLength(500);
  });

  it.each([
    ['not an object', 'x', 'p must be an object {current?, total?, message?}'],
    ['a string current', { current: '3' }, 'p.current must be a finite number'],
    ['an infinite total', { total: Infinity }, 'p.total must be a finite number'],
    ['a numeric message', { message: 5 }, 'p.message must be a string'],
  ])('refuses %s', (_label, value, message) => {
    expect(protocolMessage(() => parseProgress(value, 'p'))).toBe(message);
  });
});

describe('pollHintMs', () => {
  it('converts a finite positive hint to ms without clamping', () => {
    expect(pollHintMs(0.001, 1000, 'h')).toBe(1);
    expect(pollHintMs(200000, 1000, 'h')).toBe(200_000_000);
  });

  it.each([0, -1, NaN, Infinity, '5', null])('refuses %p', (value) => {
    expect(protocolMessage(() => pollHintMs(value, 1000, 'status: "poll_after_seconds"'))).toBe(
      'status: "poll_after_seconds" must be a finite number > 0',
    );
  });
});

describe('text bounds', () => {
  it('stores at most 4,000 chars of an error message', () => {
    expect(boundErrorMessage('e'.repeat(5000))).toHaveLength(4000);
  });

  it('keeps the first text block, cut to 500, as last_error', () => {
    const result = {
      content: [
        { type: 'text', text: 'w'.repeat(900) },
        { type: 'text', text: 'second' },
      ],
    };
    expect(lastErrorText(result, 'fallback')).toBe('w'.repeat(500));
  });

  it('falls back when the first block is not text', () => {
    expect(lastErrorText({ content: [{ type: 'image', data: '', mimeType: 'x' }] }, 'none')).toBe(
      'none',
    );
  });
});

describe('remoteIdProblem', () => {
  it('accepts 1..255 chars', () => {
    expect(remoteIdProblem('a')).toBeNull();
    expect(remoteIdProblem('a'.repeat(255))).toBeNull();
  });

  it('names the problem otherwise', () => {
    expect(remoteIdProblem('')).toBe('must be a non-empty string');
    expect(remoteIdProblem(7)).toBe('must be a non-empty string');
    expect(remoteIdProblem('a'.repeat(256))).toBe('is 256 chars, over the 255-char bound');
    expect(remoteIdProblem('job\u0000x')).toBe('must not contain U+0000 (NUL)');
    expect(remoteIdProblem('job-\ud83d')).toBe('must not contain a lone UTF-16 surrogate');
    expect(remoteIdProblem('job-\ud83d\ude00')).toBeNull();
  });
});
