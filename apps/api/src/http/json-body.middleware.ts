import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { ErrorRequestHandler, RequestHandler } from 'express';
import typeis from 'type-is';
import { jsonTextGuard } from './json-text.guard';
import {
  MalformedRequest,
  PayloadTooLarge,
  Refusal,
  UnsupportedMediaType,
} from '../refusals/refusal';

/** The largest request body accepted (api.md): submit bodies are arguments, not uploads. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** The media types read as JSON; any other body is a 415. */
const JSON_TYPES = ['application/json', 'application/*+json'];

/** body-parser's error types → their refusals, so each gets an exact problem. */
const PARSER_ERRORS: Readonly<Record<string, () => Refusal>> = {
  'entity.parse.failed': () => new MalformedRequest('The request body is not valid JSON.'),
  'entity.too.large': () =>
    new PayloadTooLarge(`The request body exceeds ${BODY_LIMIT_BYTES} bytes.`),
  'encoding.unsupported': () =>
    new UnsupportedMediaType('The request body has an unsupported content encoding.'),
  'charset.unsupported': () =>
    new UnsupportedMediaType('The request body has an unsupported charset.'),
  'request.aborted': () => new MalformedRequest('The request was aborted.'),
  'request.size.invalid': () =>
    new MalformedRequest('The request body length does not match Content-Length.'),
};

/** Reads and parses a JSON body into `req.body`, then calls `done` (with the parser's error). */
export type JsonBodyReader = (
  req: IncomingMessage,
  res: ServerResponse,
  done: (error?: unknown) => void,
) => void;

/**
 * The 415 of a request whose body is not JSON, or undefined (a request without a body passes).
 * Shared by the middleware below and the submit fast path.
 */
export function nonJsonBodyProblem(req: IncomingMessage): Refusal | undefined {
  const hasBody =
    req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  return hasBody && !typeis(req, JSON_TYPES)
    ? new UnsupportedMediaType('The request body must be application/json.')
    : undefined;
}

/**
 * The one JSON body parser (body-parser, up to 1 MiB). Strict mode is off so a JSON body of
 * `"text"` or `3` parses and fails validation as a 422 with a path, instead of a vague 400.
 */
export function createJsonBodyReader(): JsonBodyReader {
  // body-parser reads Node's own request and response; Express's additions are not used.
  return express.json({ limit: BODY_LIMIT_BYTES, strict: false, type: JSON_TYPES });
}

/**
 * The problem for a parser failure, or the error itself when it is not one of the parser's: its
 * own errors would otherwise reach Nest as a bare SyntaxError (whose message echoes the body) or
 * as an unmapped 500.
 */
export function parserProblem(error: unknown): unknown {
  const type =
    typeof error === 'object' && error !== null ? (error as { type?: unknown }).type : undefined;
  const known = typeof type === 'string' ? PARSER_ERRORS[type] : undefined;
  return known ? known() : error;
}

/**
 * The API's only body parsing, in order: refuse a body that is not JSON (415), parse JSON up to
 * 1 MiB, turn parser failures into problems, and refuse text Postgres cannot store or JSON too
 * deep to walk (422).
 */
export function jsonBodyMiddlewares(): [
  RequestHandler,
  RequestHandler,
  ErrorRequestHandler,
  RequestHandler,
] {
  const requireJson: RequestHandler = (req, _res, next) => next(nonJsonBodyProblem(req));
  const mapErrors: ErrorRequestHandler = (error: unknown, _req, _res, next) =>
    next(parserProblem(error));
  return [requireJson, createJsonBodyReader(), mapErrors, jsonTextGuard()];
}
