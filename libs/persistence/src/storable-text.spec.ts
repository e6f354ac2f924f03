// Guards against U+0000 or a lone UTF-16 surrogate reaching a Postgres parameter: replaced in text, JSON strings and keys at any depth.
import { storableText } from '@app/common';
import { storableJson, storableParams } from './storable-text';

describe('storable text', () => {
  it('replaces every U+0000 in text with U+FFFD and leaves other text alone', () => {
    expect(storableText('a\u0000b\u0000')).toBe('a\uFFFDb\uFFFD');
    expect(storableText('plain \\u0000 text')).toBe('plain \\u0000 text');
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

  it('replaces lone surrogates, high or low, and keeps pairs (an emoji) whole', () => {
    const emoji = '\ud83d\ude00';
    expect(storableText(`cut ${emoji.slice(0, 1)}`)).toBe('cut \uFFFD');
    expect(storableText(`${emoji.slice(1)} tail`)).toBe('\uFFFD tail');
    expect(storableText(`whole ${emoji} \udbff`)).toBe(`whole ${emoji} \uFFFD`);
    const value = { [`k${emoji.slice(0, 1)}`]: [`v${emoji.slice(1)}`, emoji] };
    const json = storableJson(value);
    expect(json).not.toMatch(/\\ud[89a-f]/);
    expect(JSON.parse(json)).toEqual({ 'k\uFFFD': ['v\uFFFD', emoji] });
    expect(storableJson({ emoji })).toBe(JSON.stringify({ emoji }));
  });

  it('replaces U+0000 in string parameters and Postgres array elements', () => {
    const date = new Date(0);
    expect(storableParams(['a\u0000', 1, null, date, ['b\u0000', 'c\ud800']])).toEqual([
      'a\uFFFD',
      1,
      null,
      date,
      ['b\uFFFD', 'c\uFFFD'],
    ]);
  });
});
