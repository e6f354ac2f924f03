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
});
