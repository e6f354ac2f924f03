// Guards against cursor and Prefer parsing drifting from what the API promises.
import { decodeCursor, encodeCursor } from './list-cursor';
import { parsePreferWait } from './prefer-wait';
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

describe('canonical JSON', () => {
  it('ignores key order and measures depth without recursion', () => {
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null })).toBe(
      '{"a":null,"b":[1,{"c":2,"d":1}]}',
    );
    expect(jsonDepth(JSON.parse('['.repeat(100000) + ']'.repeat(100000)))).toBeGreaterThan(64);
  });
});
