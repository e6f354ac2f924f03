// Guards the storage bounds of results: never cut JSON, never silently change a non-JSON value.
import { JSON_FIELD_MAX_BYTES, PermanentTaskError, TaskErrorCode } from '@app/common';
import { boundJsonField, boundResult, toCompactJson } from './bound-result';

const LIMITS = { maxResultBytes: 64, previewChars: 10 };

function protocolFailure(run: () => unknown): PermanentTaskError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(PermanentTaskError);
    expect((error as PermanentTaskError).code).toBe(TaskErrorCode.ProtocolError);
    return error as PermanentTaskError;
  }
  throw new Error('expected a protocol_error');
}

describe('boundResult', () => {
  it('keeps a result at or under the bound as its compact JSON value', () => {
    const value = { a: [1, 2, { b: 'c' }], d: null };
    expect(boundResult(value, LIMITS, 'r')).toEqual({ value, preview: null, truncated: false });
  });

  it('measures UTF-8 bytes of compact JSON, not characters', () => {
    const exact = 'é'.repeat(31); // "…" quotes + 62 bytes = 64 bytes
    expect(boundResult(exact, LIMITS, 'r').truncated).toBe(false);
    expect(boundResult(`${exact}é`, LIMITS, 'r').truncated).toBe(true);
  });

  it('over the bound stores no value, a preview of the first chars, truncated true', () => {
    const value = { filler: 'x'.repeat(100) };
    const bounded = boundResult(value, LIMITS, 'r');
    expect(bounded).toEqual({ value: null, preview: '{"filler":', truncated: true });
  });

  it('never stores cut JSON as the value', () => {
    const bounded = boundResult(['y'.repeat(200)], LIMITS, 'r');
    expect(bounded.value).toBeNull();
    expect(() => JSON.parse(bounded.preview as string)).toThrow();
  });

  it('drops undefined members the way JSON does', () => {
    expect(boundResult({ a: undefined, b: 1 }, LIMITS, 'r').value).toEqual({ b: 1 });
  });

  it.each([
    ['NaN', NaN],
    ['Infinity', { x: Infinity }],
    ['-Infinity', [-Infinity]],
    ['BigInt', { n: BigInt(1) }],
    ['undefined at the top', undefined],
    ['a function at the top', () => 1],
  ])('refuses %s as protocol_error naming the field', (_label, value) => {
    const error = protocolFailure(() => boundResult(value, LIMITS, 'status: "result"'));
    expect(error.message).toMatch(/^status: "result" must be JSON/);
  });

  it('refuses a cycle as protocol_error', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    protocolFailure(() => toCompactJson(cycle, 'result'));
  });
});

describe('boundJsonField', () => {
  it('accepts exactly 65,536 bytes of JSON', () => {
    const value = { q: 'x'.repeat(JSON_FIELD_MAX_BYTES - 8) };
    expect(toCompactJson(value, 'f')).toHaveLength(JSON_FIELD_MAX_BYTES);
    expect(boundJsonField(value, 'f')).toEqual(value);
  });

  it('refuses one byte more with protocol_error naming the field and bound', () => {
    const value = { q: 'x'.repeat(JSON_FIELD_MAX_BYTES - 7) };
    const error = protocolFailure(() => boundJsonField(value, 'status: "input_required"'));
    expect(error.message).toBe(
      'status: "input_required" is 65537 bytes of JSON, over the 65536-byte bound',
    );
  });
});
