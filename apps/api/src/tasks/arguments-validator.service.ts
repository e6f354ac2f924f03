import { Injectable, Logger } from '@nestjs/common';
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ProblemFieldError } from '../problem/problem.exception';

/** A 422 lists at most this many failures: enough to fix a request, bounded for huge arrays. */
const MAX_ERRORS = 50;
/** Compiled validators kept; catalogs hold tens of toolsets, so this only bounds misuse. */
const MAX_CACHED = 500;

/**
 * Validates submitted arguments against a toolset's input schema from the catalog, with ajv.
 * Compiled validators are cached by the schema's text, so a poller republishing a changed
 * schema takes effect at once. Schemas declaring draft-04/06/07 use ajv's default dialect;
 * anything else uses 2020-12, the dialect MCP assumes when a tool's schema names none.
 */
@Injectable()
export class ArgumentsValidator {
  private readonly logger = new Logger('ArgumentsValidator');
  private readonly draft7 = addFormats(new Ajv({ allErrors: true, strict: false }));
  private readonly draft2020 = addFormats(new Ajv2020({ allErrors: true, strict: false }));
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
    if (cached !== undefined) return cached;
    let validate: ValidateFunction | null;
    try {
      const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
      const older = /draft-0[4-7]/.test(dialect);
      validate = (older ? this.draft7 : this.draft2020).compile(schema);
    } catch (error) {
      this.logger.warn(
        `an input schema does not compile; arguments are not checked: ${String(error)}`,
      );
      validate = null;
    }
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(key, validate);
    return validate;
  }
}

function toFieldError(error: ErrorObject): ProblemFieldError {
  const missing = (error.params as { missingProperty?: unknown }).missingProperty;
  const extra = (error.params as { additionalProperty?: unknown }).additionalProperty;
  let path = `/arguments${error.instancePath}`;
  if (typeof missing === 'string') path += `/${escape(missing)}`;
  else if (typeof extra === 'string') path += `/${escape(extra)}`;
  const message =
    error.keyword === 'required'
      ? 'is required'
      : error.keyword === 'additionalProperties'
        ? 'is not allowed'
        : (error.message ?? 'is invalid');
  return { path, message };
}

function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
