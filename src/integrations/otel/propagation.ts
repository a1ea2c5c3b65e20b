/**
 * Trace context across processes: write a context into a plain object of
 * strings that travels with a job, and read it back on the other side.
 * @module
 */
import type { Context, TextMapPropagator } from '@opentelemetry/api';
import { otelApi } from './api.js';
import { ConfigurationError, describeValue } from '../../core/errors.js';

/** A trace context as a plain object of strings (W3C `traceparent` and `tracestate` with the default propagator): JSON-safe, so a job can carry it. */
export type TraceCarrier = Record<string, string>;

/**
 * Write `context` into `carrier` with `propagator` (default: the globally
 * registered one, W3C trace context with the usual SDK setup) and return it.
 *
 * @example
 * ```ts
 * const job = { chunk, prompt, traceContext: injectTraceContext(context.active()) };
 * ```
 */
export function injectTraceContext<C extends TraceCarrier = TraceCarrier>(context: Context, carrier?: C, propagator?: TextMapPropagator): C {
  const target = (carrier ?? {}) as C;
  if (typeof target !== 'object' || target === null) {
    throw new ConfigurationError(`Expected \`carrier\` to be an object, got ${describeValue(carrier)}`);
  }
  const api = otelApi('injectTraceContext');
  if (propagator) propagator.inject(context, target, api.defaultTextMapSetter);
  else api.propagation.inject(context, target, api.defaultTextMapSetter);
  return target;
}

/**
 * Read a trace context from `carrier` (what {@link injectTraceContext} or
 * `OtelTracing.inject` wrote), on top of `base` (default: the root
 * context). Pass the result as `otelTracing({ parent })` on the process
 * that runs the work, so its spans join the same trace. A carrier without a
 * valid context gives `base` back.
 *
 * @example
 * ```ts
 * const tracing = otelTracing({ parent: extractTraceContext(job.traceContext) });
 * ```
 */
export function extractTraceContext(carrier: Readonly<TraceCarrier> | undefined, propagator?: TextMapPropagator, base: Context = otelApi('extractTraceContext').ROOT_CONTEXT): Context {
  if (carrier === undefined) return base;
  if (typeof carrier !== 'object' || carrier === null) {
    throw new ConfigurationError(`Expected \`carrier\` to be an object of strings, got ${describeValue(carrier)}`);
  }
  const api = otelApi('extractTraceContext');
  return propagator ? propagator.extract(base, carrier, api.defaultTextMapGetter) : api.propagation.extract(base, carrier, api.defaultTextMapGetter);
}
