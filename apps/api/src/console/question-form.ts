import { isRecord } from '@app/common';
import { SafeHtml, html } from './html';

/** One open question as the task view shows it. */
export interface Question {
  method: string;
  params: Record<string, unknown>;
}

type Schema = Record<string, unknown>;

/** String formats of the MCP elicitation form schema and the input type each becomes. */
const FORMAT_INPUTS: Readonly<Record<string, string>> = {
  email: 'email',
  uri: 'url',
  date: 'date',
  'date-time': 'datetime-local',
};

/**
 * A question as a form (docs/console.md, "Answering"): for `elicitation/create` in form mode,
 * one field per property of `requestedSchema` (the MCP elicitation form schema: a flat object of
 * strings with formats, numbers, integers, booleans and enums, some required), and the three
 * actions of an ElicitResult. Every text in it (message, titles, descriptions, enum labels) is
 * the upstream's and is escaped. Another method, or an upstream that cannot take answers, is
 * shown for information only. The page's script reads `data-*` to build the JSON answer.
 */
export function questionForm(key: string, question: Question, answerable: boolean): SafeHtml {
  const message = typeof question.params.message === 'string' ? question.params.message : '';
  const schema = asSchema(question.params.requestedSchema);
  const isForm = question.method === 'elicitation/create' && question.params.mode !== 'url';
  if (!answerable || !isForm) {
    return html`<section class="question" data-question-key="${key}">
      <h3>${key}</h3>
      <p class="message">${message}</p>
      <p class="note">
        Shown for information:
        ${
          answerable
            ? `${question.method} is answered through the API`
            : 'this upstream cannot take answers through the gateway'
        }.
      </p>
    </section>`;
  }
  const properties = asSchema(schema?.properties) ?? {};
  const required = Array.isArray(schema?.required) ? (schema.required as unknown[]) : [];
  const fields = Object.entries(properties).map(([name, property]) =>
    field(key, name, asSchema(property) ?? {}, required.includes(name)),
  );
  return html`<form class="question" data-question-key="${key}" novalidate>
    <h3>${key}</h3>
    <p class="message">${message}</p>
    ${fields}
    <div class="actions">
      <button type="submit" name="action" value="accept">Accept</button>
      <button type="submit" name="action" value="decline" class="secondary">Decline</button>
      <button type="submit" name="action" value="cancel" class="secondary">Cancel</button>
    </div>
    <div class="outcome" role="status" aria-live="polite"></div>
  </form>`;
}

function field(key: string, name: string, schema: Schema, required: boolean): SafeHtml {
  const id = `q-${key}-${name}`.replace(/[^A-Za-z0-9_-]/g, '_');
  const title = typeof schema.title === 'string' ? schema.title : name;
  const description = typeof schema.description === 'string' ? schema.description : '';
  const label = html`<label for="${id}"
    >${title}${required ? html`<span class="req"> *</span>` : ''}</label
  >`;
  const hint = description ? html`<small>${description}</small>` : '';
  const common = { id, name, required };
  const type = schema.type;
  const options = enumOptions(schema);
  let control: SafeHtml;
  if (options) {
    control = html`<select
      id="${common.id}"
      data-field="${name}"
      data-type="enum"
      ${attr('required', required)}
    >
      ${required ? '' : html`<option value="">(none)</option>`}
      ${options.map(
        (o) =>
          html`<option value="${o.value}" ${attr('selected', o.value === schema.default)}>
            ${o.label}
          </option>`,
      )}
    </select>`;
  } else if (type === 'array') {
    const items = enumOptions(asSchema(schema.items) ?? {}) ?? [];
    control = html`<select id="${id}" data-field="${name}" data-type="array" multiple>
      ${items.map((o) => html`<option value="${o.value}">${o.label}</option>`)}
    </select>`;
  } else if (type === 'boolean') {
    return html`<div class="field checkbox">
      <input
        type="checkbox"
        id="${id}"
        data-field="${name}"
        data-type="boolean"
        ${attr('checked', schema.default === true)}
      />
      ${label} ${hint}
    </div>`;
  } else if (type === 'number' || type === 'integer') {
    control = html`<input
      type="number"
      id="${id}"
      data-field="${name}"
      data-type="${type}"
      step="${type === 'integer' ? '1' : 'any'}"
      ${numberAttr('min', schema.minimum)}
      ${numberAttr('max', schema.maximum)}
      ${numberAttr('value', schema.default)}
      ${attr('required', required)}
    />`;
  } else {
    const format = typeof schema.format === 'string' ? schema.format : '';
    const inputType = FORMAT_INPUTS[format] ?? 'text';
    control = html`<input
      type="${inputType}"
      id="${id}"
      data-field="${name}"
      data-type="string"
      data-format="${format}"
      ${numberAttr('minlength', schema.minLength)}
      ${numberAttr('maxlength', schema.maxLength)}
      value="${typeof schema.default === 'string' ? schema.default : ''}"
      ${attr('required', required)}
    />`;
  }
  return html`<div class="field">${label}${control}${hint}</div>`;
}

/** Enum choices: `oneOf` of `{const, title}`, or `enum` with optional `enumNames`. */
function enumOptions(schema: Schema): { value: string; label: string }[] | null {
  if (Array.isArray(schema.oneOf)) {
    const options = (schema.oneOf as unknown[])
      .map((o) => asSchema(o))
      .filter((o): o is Schema => o !== null && typeof o.const === 'string')
      .map((o) => ({
        value: o.const as string,
        label: typeof o.title === 'string' ? o.title : (o.const as string),
      }));
    return options.length > 0 ? options : null;
  }
  if (!Array.isArray(schema.enum)) return null;
  const names = Array.isArray(schema.enumNames) ? (schema.enumNames as unknown[]) : [];
  return (schema.enum as unknown[])
    .filter((v): v is string => typeof v === 'string')
    .map((value, i) => ({ value, label: typeof names[i] === 'string' ? names[i] : value }));
}

function asSchema(value: unknown): Schema | null {
  return isRecord(value) ? value : null;
}

function attr(name: string, on: boolean): SafeHtml {
  return new SafeHtml(on ? name : '');
}

function numberAttr(name: string, value: unknown): SafeHtml | string {
  return typeof value === 'number' && Number.isFinite(value)
    ? html`${name}="${String(value)}"`
    : '';
}
