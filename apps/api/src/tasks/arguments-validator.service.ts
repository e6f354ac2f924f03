import { Injectable, Logger } from '@nestjs/common';
import Ajv, {
  ErrorObject,
  FuncKeywordDefinition,
  SchemaValidateFunction,
  ValidateFunction,
} from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ProblemFieldError } from '../problem/problem.exception';
import { pointerToken } from '../http/json-pointer';

/** A 422 lists at most this many failures: enough to fix a request, bounded for huge arrays. */
const MAX_ERRORS = 50;
/**
 * Compiled validators kept, least recently used dropped first. Catalogs hold tens of toolsets
 * and questions bring a few `requestedSchema`s more; each entry holds its own ajv instance
 * (below), so the bound is on memory as well as on misuse.
 */
const MAX_CACHED = 200;

/**
 * Validates submitted arguments against a toolset's input schema from the catalog, with ajv.
 * Compiled validators are cached by the schema's text, so a poller republishing a changed
 * schema takes effect at once. Schemas declaring draft-04/06/07 use ajv's default dialect;
 * anything else uses 2020-12, the dialect MCP assumes when a tool's schema names none.
 *
 * Upstream schemas are strangers to each other, so each is compiled in an ajv instance of its
 * own: with one shared instance, a second schema with the same `$id` failed to compile ("already
 * exists") and its arguments went unchecked, and every schema compiled stayed in the instance
 * for the process's life, whatever this cache dropped. An instance without meta-schemas costs
 * about 17 ms (2020-12) or 6 ms (draft-07) to build and compile on the reference machine, once
 * per schema. `uniqueItems` is checked in linear time (`uniqueItemsKeyword`): ajv's own check
 * compares every pair of object items, 56 s of a blocked event loop for 20,000 of them.
 */
@Injectable()
export class ArgumentsValidator {
  private readonly logger = new Logger('ArgumentsValidator');
  /** By schema text, in least-recently-used order (a Map keeps insertion order). */
  private readonly cache = new Map<string, ValidateFunction | null>();
  /** The same schema object again (the catalog hands out its remembered entry): no stringify. */
  private readonly byObject = new WeakMap<object, ValidateFunction | null>();

  /** Every failure, with paths under `/arguments`; empty when the arguments are valid. */
  validate(schema: Record<string, unknown>, args: unknown): ProblemFieldError[] {
    const validate = this.compiled(schema);
    // An upstream schema ajv cannot compile is not the caller's fault: the upstream still
    // validates its own input, so the task is accepted rather than every submit refused.
    if (!validate || validate(args)) return [];
    return (validate.errors ?? []).slice(0, MAX_ERRORS).map(toFieldError);
  }

  /** Validators held now (for tests of the bound). */
  get cachedCount(): number {
    return this.cache.size;
  }

  private compiled(schema: Record<string, unknown>): ValidateFunction | null {
    const known = this.byObject.get(schema);
    if (known !== undefined) return known;
    const validate = this.compiledByText(schema);
    this.byObject.set(schema, validate);
    return validate;
  }

  private compiledByText(schema: Record<string, unknown>): ValidateFunction | null {
    const key = JSON.stringify(schema);
    const cached = this.cache.get(key);
    if (cached !== undefined) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    let validate: ValidateFunction | null;
    try {
      validate = compileAlone(schema);
    } catch (error) {
      this.logger.warn(
        `an input schema does not compile; arguments are not checked: ${String(error)}`,
      );
      validate = null;
    }
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, validate);
    return validate;
  }
}

/** `schema` compiled in an ajv instance of its own (its `$id`s meet no other schema's). */
function compileAlone(schema: Record<string, unknown>): ValidateFunction {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  // No meta-schemas (a schema is not validated against its dialect: ajv still refuses what it
  // cannot compile), and nothing kept in the instance beyond this schema.
  const options = { allErrors: true, strict: false, meta: false, validateSchema: false };
  const ajv = /draft-0[4-7]/.test(dialect) ? new Ajv(options) : new Ajv2020(options);
  addFormats(ajv);
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword(uniqueItemsKeyword());
  return ajv.compile(schema);
}

/**
 * `uniqueItems` in linear time: each item's canonical JSON (object keys sorted, so `{a,b}` and
 * `{b,a}` are equal, as JSON Schema's equality says) goes into a set, instead of ajv's
 * comparison of every pair.
 */
function uniqueItemsKeyword(): FuncKeywordDefinition {
  const validate: SchemaValidateFunction = (unique: boolean, data: unknown[]) => {
    if (!unique) return true;
    const seen = new Map<string, number>();
    for (let j = 0; j < data.length; j++) {
      const text = canonicalJson(data[j]);
      const i = seen.get(text);
      if (i !== undefined) {
        validate.errors = [
          {
            keyword: 'uniqueItems',
            params: { i, j },
            message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
          },
        ];
        return false;
      }
      seen.set(text, j);
    }
    return true;
  };
  return { keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', errors: true, validate };
}

/** JSON with every object's keys in sorted order: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const members = Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function toFieldError(error: ErrorObject): ProblemFieldError {
  const missing = (error.params as { missingProperty?: unknown }).missingProperty;
  const extra = (error.params as { additionalProperty?: unknown }).additionalProperty;
  let path = `/arguments${error.instancePath}`;
  if (typeof missing === 'string') path += `/${pointerToken(missing)}`;
  else if (typeof extra === 'string') path += `/${pointerToken(extra)}`;
  const message =
    error.keyword === 'required'
      ? 'is required'
      : error.keyword === 'additionalProperties'
        ? 'is not allowed'
        : (error.message ?? 'is invalid');
  return { path, message };
}
