// Guards against cursor, Prefer and rate-limit parsing drifting from what the API promises.
import { parseSettings } from '@app/config';
import { decodeCursor, encodeCursor } from './list-cursor';
import { parsePreferWait } from './prefer-wait';
import { SubmitRateLimiter } from './submit-rate-limiter.service';
import { canonicalJson, jsonDepth } from './submit-request';

describe('list cursor', () => {
  it('round-trips a position and refuses anything it did not issue', () => {
    const position = {
      createdAt: '2025-01-01T10:00:00.123456Z',
      id: 'task_abcdefghijklmnopqrstuvwxyz',
    };
    expect(decodeCursor(encodeCursor(position))).toEqual(position);
    for (const bad of [
      '',
      'x',
      '!!!',
      Buffer.from('2025-01-01T10:00:00.123Z|task_x').toString('base64url'),
    ])
      expect(decodeCursor(bad)).toBeNull();
  });
});

describe('Prefer: wait', () => {
  it.each([
    ['wait=5', 5],
    ['respond-async, wait=10', 10],
    ['wait=31', 30],
    ['wait="7"', 7],
    ['wait=x', undefined],
    ['return=minimal', undefined],
    [undefined, undefined],
  ])('%s → %s', (header, seconds) => expect(parsePreferWait(header)).toBe(seconds));
});

describe('submit rate limiter', () => {
  it('allows a minute of burst, then refills evenly', () => {
    const limiter = new SubmitRateLimiter(parseSettings({ SUBMIT_RATE_LIMIT_PER_MINUTE: '2' }));
    let now = 0;
    limiter.now = () => now;
    expect([limiter.take('u'), limiter.take('u')]).toEqual([0, 0]);
    expect(limiter.take('u')).toBe(30);
    expect(limiter.take('v')).toBe(0);
    now = 30_000;
    expect(limiter.take('u')).toBe(0);
  });

  it('is off at 0', () => {
    const limiter = new SubmitRateLimiter(parseSettings({ SUBMIT_RATE_LIMIT_PER_MINUTE: '0' }));
    for (let i = 0; i < 1000; i++) expect(limiter.take('u')).toBe(0);
  });
});

describe('canonical JSON', () => {
  it('ignores key order and measures depth without recursion', () => {
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null })).toBe(
      '{"a":null,"b":[1,{"c":2,"d":1}]}',
    );
    expect(jsonDepth(JSON.parse('['.repeat(100000) + ']'.repeat(100000)))).toBeGreaterThan(64);
  });
});
