/**
 * `troupe/otel`: OpenTelemetry traces of troupe runs, through
 * `@opentelemetry/api` (an optional peer dependency) only, so the SDK and
 * exporter your application registers receive them.
 * @module troupe/otel
 * @category Integrations
 */
export { otelTracing, type OpRef, type OtelTracing, type OtelTracingOptions } from './tracing.js';
export { extractTraceContext, injectTraceContext, type TraceCarrier } from './propagation.js';
export { GEN_AI, TROUPE, type GenAiOperation } from './attributes.js';
