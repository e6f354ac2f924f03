import { ArgumentsValidator } from './arguments-validator.service';

// The dialect each schema is checked in: the one it declares (draft-04 to 07), else 2020-12.
describe('ArgumentsValidator', () => {
  // `items` as an array is a tuple in draft-07. 2020-12 spells tuples `prefixItems` and refuses
  // the array form: checked there, the schema would not compile and nothing would be checked.
  const tuple = { type: 'array', items: [{ type: 'integer' }], additionalItems: false };

  it('checks a schema declaring draft-07 in draft-07', () => {
    const validator = new ArgumentsValidator();
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { pair: tuple },
    };
    expect(validator.validate(schema, { pair: [1] })).toEqual([]);
    expect(validator.validate(schema, { pair: ['x'] })).toEqual([
      { path: '/arguments/pair/0', message: 'must be integer' },
    ]);
    expect(validator.validate(schema, { pair: [1, 2] })).toHaveLength(1);
  });

  it('checks a schema naming no dialect in 2020-12', () => {
    const validator = new ArgumentsValidator();
    const schema = {
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'integer' }], items: false } },
      required: ['pair'],
    };
    expect(validator.validate(schema, { pair: [1] })).toEqual([]);
    expect(validator.validate(schema, { pair: ['x'] })).toEqual([
      { path: '/arguments/pair/0', message: 'must be integer' },
    ]);
    expect(validator.validate(schema, {})).toEqual([
      { path: '/arguments/pair', message: 'is required' },
    ]);
  });

  // Upstream schemas are strangers: two servers may both name a schema `$id: .../input`.
  it('checks two schemas with the same $id each by its own rules', () => {
    const validator = new ArgumentsValidator();
    const $id = 'https://schemas.example/input.json';
    const numbers = { $id, type: 'object', properties: { n: { type: 'integer' } } };
    const words = { $id, type: 'object', properties: { n: { type: 'string' } } };
    expect(validator.validate(numbers, { n: 'x' })).toEqual([
      { path: '/arguments/n', message: 'must be integer' },
    ]);
    expect(validator.validate(words, { n: 1 })).toEqual([
      { path: '/arguments/n', message: 'must be string' },
    ]);
  });

  it('keeps a bounded number of compiled schemas, the least recently used dropped', () => {
    const validator = new ArgumentsValidator();
    const schema = (i: number) => ({
      type: 'object',
      properties: { [`p${i}`]: { type: 'integer' } },
    });
    for (let i = 0; i < 205; i++) validator.validate(schema(i), {});
    expect(validator.cachedCount).toBe(200);
    // The newest still validates as before.
    expect(validator.validate(schema(204), { p204: 'x' })).toHaveLength(1);
  });

  it('checks uniqueItems over a large array of objects in linear time', () => {
    const validator = new ArgumentsValidator();
    const schema = { type: 'object', properties: { rows: { type: 'array', uniqueItems: true } } };
    // ajv's own check compared every pair: 20,000 objects took 56 s on the reference machine,
    // far past this test's 10 s timeout; one pass over them takes about a tenth of a second.
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, label: 'same' }));
    expect(validator.validate(schema, { rows })).toEqual([]);
    // Equal as JSON Schema means equal: key order does not matter.
    const twice = [...rows, { label: 'same', id: 7 }];
    expect(validator.validate(schema, { rows: twice })).toEqual([
      {
        path: '/arguments/rows',
        message: 'must NOT have duplicate items (items ## 20000 and 7 are identical)',
      },
    ]);
  }, 10_000);
});
