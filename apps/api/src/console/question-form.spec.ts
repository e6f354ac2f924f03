// Guards against question forms that drop a field kind of the MCP elicitation form schema, lose
// `required`, or let an upstream's text through as markup.
import { questionForm } from './question-form';

function form(properties: Record<string, unknown>, required: string[] = []): string {
  return questionForm(
    'q',
    {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: 'Pick <b>one</b>',
        requestedSchema: { type: 'object', properties, required },
      },
    },
    true,
  ).text;
}

it('makes one field per property, by type and format', () => {
  const text = form(
    {
      name: { type: 'string', minLength: 2, maxLength: 9 },
      mail: { type: 'string', format: 'email' },
      site: { type: 'string', format: 'uri' },
      day: { type: 'string', format: 'date' },
      at: { type: 'string', format: 'date-time' },
      count: { type: 'integer', minimum: 1, maximum: 5 },
      ratio: { type: 'number' },
      ok: { type: 'boolean', default: true },
      color: { type: 'string', enum: ['r', 'g'], enumNames: ['Red', 'Green'] },
      size: { type: 'string', oneOf: [{ const: 's', title: 'Small' }] },
      tags: { type: 'array', items: { enum: ['a', 'b'] } },
    },
    ['name', 'count'],
  );
  const input = (field: string): string =>
    new RegExp(`<(input|select)[^>]*data-field="${field}"[^>]*>`).exec(text)?.[0] ?? '';
  expect(input('name')).toMatch(/type="text".*minlength="2".*maxlength="9".*required/s);
  expect(input('mail')).toContain('type="email"');
  expect(input('site')).toContain('type="url"');
  expect(input('day')).toContain('type="date"');
  expect(input('at')).toMatch(/type="datetime-local".*data-format="date-time"/s);
  expect(input('count')).toMatch(
    /type="number".*data-type="integer".*step="1".*min="1".*max="5".*required/s,
  );
  expect(input('ratio')).toMatch(/data-type="number".*step="any"/s);
  expect(input('ratio')).not.toContain('required');
  expect(input('ok')).toMatch(/type="checkbox".*checked/s);
  expect(input('color')).toContain('data-type="enum"');
  expect(text).toMatch(/<option value="g"\s*>\s*Green\s*<\/option>/);
  expect(text).toMatch(/<option value="s"\s*>\s*Small\s*<\/option>/);
  expect(input('tags')).toMatch(/data-type="array".*multiple/s);
  expect(text).toMatch(/value="accept"[\s\S]*value="decline"[\s\S]*value="cancel"/);
});

it("escapes the upstream's message, titles and choices", () => {
  const text = form({
    x: { type: 'string', title: '<img src=x>', description: '"quoted"', enum: ['<a>'] },
  });
  expect(text).toContain('Pick &lt;b&gt;one&lt;/b&gt;');
  expect(text).toContain('&lt;img src=x&gt;');
  expect(text).toContain('&quot;quoted&quot;');
  expect(text).toContain('value="&lt;a&gt;"');
  expect(text).not.toMatch(/<img|<b>|<a>/);
});

it('shows a question it cannot turn into a form for information only', () => {
  const text = questionForm(
    'u',
    { method: 'elicitation/create', params: { mode: 'url', message: 'Open it' } },
    true,
  ).text;
  expect(text).not.toContain('<form');
  expect(text).toContain('Shown for information');
  const closed = questionForm('c', { method: 'elicitation/create', params: {} }, false).text;
  expect(closed).toContain('cannot take answers through the gateway');
});
