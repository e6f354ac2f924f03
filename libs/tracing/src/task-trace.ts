import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** A W3C trace context as stored on a task (`tasks.trace_context`) and sent upstream. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** The submit request's span, open until `end`. */
export interface SubmitSpan {
  /** What to store on the task: the submit span's own context. */
  carrier: TraceCarrier | null;
  end(attributes: Attributes): void;
}

const propagator = new W3CTraceContextPropagator();
// Set by startTracing; undefined means off: every helper returns at once.
let tracer: Tracer | undefined;
// The attempt (or delivery) span of the code running now, read by the upstream call layers.
const current = new AsyncLocalStorage<Context>();

/** @internal Called by startTracing. */
export function enableTaskTracing(active: Tracer): void {
  tracer = active;
}

/**
 * Opens the submit span, a child of the request's `traceparent`/`tracestate` when they are
 * valid, else the root of a new trace. Undefined when tracing is off (nothing is stored).
 */
export function startSubmitSpan(headers: Record<string, unknown>): SubmitSpan | undefined {
  if (!tracer) return undefined;
  const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
  const span = tracer.startSpan('task.submit', { kind: SpanKind.SERVER }, parent);
  const carrier = inject(trace.setSpan(parent, span)) ?? null;
  return {
    carrier,
    end(attributes) {
      span.setAttributes(attributes);
      span.end();
    },
  };
}

/**
 * Runs `fn` inside a span that is a child of the task's stored context (a new trace when the
 * task has none), so its upstream calls carry it. With tracing off this is `fn()`.
 * @param attributes low-cardinality only (phase, toolset): never remote IDs or secrets.
 */
export async function runInTaskSpan<T>(
  name: string,
  stored: unknown,
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracer) return fn();
  const parent = isCarrier(stored)
    ? propagator.extract(ROOT_CONTEXT, stored, defaultTextMapGetter)
    : ROOT_CONTEXT;
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent);
  try {
    return await current.run(trace.setSpan(parent, span), fn);
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

/** Adds attributes (e.g. the outcome) to the span `runInTaskSpan` opened around this code. */
export function annotateTaskSpan(attributes: Attributes): void {
  const context = current.getStore();
  if (context) trace.getSpan(context)?.setAttributes(attributes);
}

/** The `traceparent`/`tracestate` of the span around this code; undefined outside one or off. */
export function currentTraceCarrier(): TraceCarrier | undefined {
  const context = current.getStore();
  return context ? inject(context) : undefined;
}

/** `params` with the current span's context added to `_meta`; the same object when there is none. */
export function withTraceMeta<P extends Record<string, unknown>>(params: P): P {
  const carrier = currentTraceCarrier();
  if (!carrier) return params;
  const meta = params._meta;
  const base = typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? meta : {};
  return { ...params, _meta: { ...base, ...carrier } };
}

/** Fetch options with the current span's `traceparent`/`tracestate` headers; unchanged without. */
export function withTraceHeaders(init: RequestInit | undefined): RequestInit | undefined {
  const carrier = currentTraceCarrier();
  if (!carrier) return init;
  const headers = new Headers(init?.headers);
  headers.set('traceparent', carrier.traceparent);
  if (carrier.tracestate) headers.set('tracestate', carrier.tracestate);
  return { ...init, headers };
}

function inject(context: Context): TraceCarrier | undefined {
  const out: Record<string, string> = {};
  propagator.inject(context, out, defaultTextMapSetter);
  if (!out.traceparent) return undefined;
  return out.tracestate
    ? { traceparent: out.traceparent, tracestate: out.tracestate }
    : { traceparent: out.traceparent };
}

function isCarrier(value: unknown): value is TraceCarrier {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { traceparent?: unknown }).traceparent === 'string'
  );
}
