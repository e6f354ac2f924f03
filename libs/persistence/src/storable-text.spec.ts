// Guards against U+0000 reaching a Postgres parameter: replaced in text, JSON strings and keys at any depth.
import { storableJson, storableParams, withoutNul } from './storable-text';

describe('storable text', () => {
  it('replaces every U+0000 in text with U+FFFD and leaves other text alone', () => {
    expect(withoutNul('a\u0000b\u0000')).toBe('a\uFFFDb\uFFFD');
    expect(withoutNul('plain \\u0000 text')).toBe('plain \\u0000 text');
  });

  it('replaces U+0000 in JSON strings and keys at any depth', () => {
    const value = { 'k\u0000': [{ deep: { 'x\u0000y': 'v\u0000' } }, 'a\u0000'], n: 1 };
    const json = storableJson(value);
    expect(json).not.toContain('\\u0000');
    expect(JSON.parse(json)).toEqual({
      'k\uFFFD': [{ deep: { 'x\uFFFDy': 'v\uFFFD' } }, 'a\uFFFD'],
      n: 1,
    });
  });

  it('keeps an escaped backslash followed by u0000 as text, and plain JSON unchanged', () => {
    const value = { text: '\\u0000 is how JSON writes NUL', list: [1, null, true] };
    expect(storableJson(value)).toBe(JSON.stringify(value));
  });

  it('replaces U+0000 in string parameters and Postgres array elements', () => {
    const date = new Date(0);
    expect(storableParams(['a\u0000', 1, null, date, ['b\u0000']])).toEqual([
      'a\uFFFD',
      1,
      null,
      date,
      ['b\uFFFD'],
    ]);
  });
});
