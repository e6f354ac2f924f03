/**
 * HTML built by a tagged template that escapes every interpolated value, so text from users and
 * upstreams (results, questions, errors, metadata) can only ever be text. Markup is only what the
 * templates themselves spell out, or a nested `html` value.
 */
export class SafeHtml {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text as HTML text or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** An interpolated value: SafeHtml as is, arrays joined, null and undefined as nothing. */
function part(value: unknown): string {
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(part).join('');
  if (value === null || value === undefined || value === false) return '';
  // Views interpolate strings and numbers; anything else is a bug, shown as JSON text.
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : JSON.stringify(value);
  return escapeHtml(text);
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  values.forEach((value, i) => {
    out += part(value) + strings[i + 1];
  });
  return new SafeHtml(out);
}
