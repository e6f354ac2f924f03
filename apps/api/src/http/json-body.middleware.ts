import express, { ErrorRequestHandler, RequestHandler } from 'express';
import { ProblemException } from '../problem/problem.exception';
import { jsonTextGuard } from './json-text.guard';

/** The largest request body accepted (api.md): submit bodies are arguments, not uploads. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** body-parser's error types → (status, detail), so each gets an exact problem. */
const PARSER_ERRORS: Readonly<Record<string, [number, string]>> = {
  'entity.parse.failed': [400, 'The request body is not valid JSON.'],
  'entity.too.large': [413, `The request body exceeds ${BODY_LIMIT_BYTES} bytes.`],
  'encoding.unsupported': [415, 'The request body has an unsupported content encoding.'],
  'charset.unsupported': [415, 'The request body has an unsupported charset.'],
  'request.aborted': [400, 'The request was aborted.'],
  'request.size.invalid': [400, 'The request body length does not match Content-Length.'],
};

/**
 * The API's only body parsing, in order: refuse a body that is not JSON (415), parse JSON up to
 * 1 MiB, turn parser failures into problems, and refuse text Postgres cannot store or JSON too
 * deep to walk (422). The parser's own errors would otherwise reach
 * Nest as a bare SyntaxError (its message echoes the body) or as an unmapped 500.
 * Strict mode is off so a JSON body of `"text"` or `3` parses and fails validation as a 422
 * with a path, instead of a vague 400.
 */
export function jsonBodyMiddlewares(): [
  RequestHandler,
  RequestHandler,
  ErrorRequestHandler,
  RequestHandler,
] {
  const requireJson: RequestHandler = (req, _res, next) => {
    const hasBody =
      req.headers['transfer-encoding'] !== undefined ||
      (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
    if (hasBody && !req.is(['application/json', 'application/*+json'])) {
      next(new ProblemException(415, 'The request body must be application/json.'));
      return;
    }
    next();
  };
  const parser = express.json({
    limit: BODY_LIMIT_BYTES,
    strict: false,
    type: ['application/json', 'application/*+json'],
  });
  const mapErrors: ErrorRequestHandler = (error: unknown, _req, _res, next) => {
    const type =
      typeof error === 'object' && error !== null ? (error as { type?: unknown }).type : undefined;
    const known = typeof type === 'string' ? PARSER_ERRORS[type] : undefined;
    next(known ? new ProblemException(known[0], known[1]) : error);
  };
  return [requireJson, parser, mapErrors, jsonTextGuard()];
}
