/**
 * Views benchmark (`npm run bench -- observe`): the cost per event of each
 * view of a run, against the copy the run log already makes of every event
 * (`JSON.parse(JSON.stringify(event))`), measured in the same run; and a
 * whole plan run without and with OpenTelemetry tracing.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { trace } from '@opentelemetry/api';
import type { TroupeEvent } from 'troupe';
import { executePlan, type Plan } from 'troupe/plan';
import { otelTracing } from 'troupe/otel';
import { buildReportData, renderRunReport } from 'troupe/report';
import { scriptedAdapter } from 'troupe/testing';
import { plainProgress } from '../src/cli/progress.js';
import { RunTracker } from '../src/views/tracker.js';

const BATCHES = 15;
const CHUNKS = 300;

/** A plan of `n` chunks, each depending on the one three before it, each chunk an agent that calls a tool once. */
function bigPlan(n: number): Plan {
  return {
    planSummary: 'Benchmark plan',
    chunks: Array.from({ length: n }, (_, i) => ({
      sequenceIndex: i + 1,
      title: `Chunk ${i + 1}`,
      prompt: `Do the work of chunk ${i + 1} carefully.`,
      dependsOnIndexes: i >= 3 ? [i - 2] : [],
      complexity: 'Medium' as const,
      role: 'Generic' as const,
    })),
  };
}

function adapter() {
  return scriptedAdapter({ fallback: (r) => `Done: ${r.text.slice(0, 40)}`, capabilities: { tools: false } });
}

export default async function bench(): Promise<void> {
  const plan = bigPlan(CHUNKS);
  const events: TroupeEvent[] = [];
  await executePlan(plan, { adapter: adapter(), maxParallel: 8, onEvent: (e) => events.push(e) });
  const n = events.length;

  const sdk = () => {
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())] });
    return otelTracing({ tracer: provider.getTracer('bench') });
  };
  const rows: Array<[string, () => unknown]> = [
    ['baseline: the run log\'s copy of each event', () => {
      for (const e of events) JSON.parse(JSON.stringify(e));
    }],
    ['RunTracker.apply', () => {
      const t = new RunTracker();
      for (const e of events) t.apply(e);
    }],
    ['otelTracing, no SDK registered (no-op spans)', () => {
      const t = otelTracing({ tracer: trace.getTracer('bench') });
      for (const e of events) t.onEvent(e);
    }],
    ['otelTracing, SDK with in-memory exporter', () => {
      const t = sdk();
      for (const e of events) t.onEvent(e);
    }],
    ['progress lines (troupe run off a terminal)', () => {
      const p = plainProgress(() => undefined);
      for (const e of events) p.onEvent(e);
    }],
    ['buildReportData', () => buildReportData(events)],
    ['renderRunReport (whole page)', () => renderRunReport(events)],
  ];
  // Warm up every row, then the rows take turns in every batch, so load that comes and goes falls on all of them.
  for (const [, fn] of rows) fn();
  const samples = rows.map((): number[] => []);
  for (let b = 0; b < BATCHES; b++) {
    for (let k = 0; k < rows.length; k++) {
      const r = (b + k) % rows.length;
      const start = process.hrtime.bigint();
      rows[r]![1]();
      samples[r]!.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  const results: Array<[string, number]> = rows.map(([name], r) => [name, samples[r]!.sort((a, b) => a - b)[Math.floor(BATCHES / 2)]!]);
  const base = results[0]![1];
  console.log(`${n} events of a ${CHUNKS}-chunk plan; median of ${BATCHES} passes over all of them, the rows taking turns.\n`);
  console.log('| view | µs/event | × baseline |');
  console.log('| --- | ---: | ---: |');
  for (const [name, ms] of results) console.log(`| ${name} | ${((ms * 1000) / n).toFixed(2)} | ${(ms / base).toFixed(1)} |`);
  console.log(`\nreport page: ${Math.round(Buffer.byteLength(renderRunReport(events)) / 1024)} KB for ${n} events`);

  // A whole run, with and without a listener: warmed up, then the variants take turns in every batch.
  const variants: Array<[string, () => Promise<unknown>]> = [
    ['no listener', () => executePlan(plan, { adapter: adapter(), maxParallel: 8 })],
    ['RunTracker', () => {
      const t = new RunTracker();
      return executePlan(plan, { adapter: adapter(), maxParallel: 8, onEvent: (e) => t.apply(e) });
    }],
    ['otelTracing with the SDK', () => executePlan(plan, { adapter: adapter(), maxParallel: 8, onEvent: sdk().onEvent })],
  ];
  for (const [, fn] of variants) await fn();
  const timings = variants.map((): number[] => []);
  for (let b = 0; b < BATCHES; b++) {
    for (let k = 0; k < variants.length; k++) {
      const v = (b + k) % variants.length;
      const start = process.hrtime.bigint();
      await variants[v]![1]();
      timings[v]!.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  const medians = timings.map((t) => t.sort((a, b) => a - b)[Math.floor(t.length / 2)]!);
  console.log('\n| whole run of the plan | ms | × no listener |');
  console.log('| --- | ---: | ---: |');
  variants.forEach(([name], i) => console.log(`| ${name} | ${medians[i]!.toFixed(1)} | ${(medians[i]! / medians[0]!).toFixed(2)} |`));
}
