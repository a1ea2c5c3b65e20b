import { SpanStatusCode, type Context } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { agent, run, startRun } from 'troupe';
import { extractTraceContext, otelTracing, type OtelTracingOptions } from 'troupe/otel';
import { SimulatedClock, scriptedAdapter } from 'troupe/testing';
import { reflect } from '../../../src/patterns/reflect.js';
import { deliveryAdapter, deliveryFlow } from '../../helpers/observe-flow.js';
import { drive } from '../../plan/helpers.js';

/** Spans that were started but never ended, to prove none are left open. */
class OpenSpans implements SpanProcessor {
  readonly open = new Set<Span>();
  onStart(span: Span): void {
    this.open.add(span);
  }
  onEnd(span: ReadableSpan): void {
    this.open.delete(span as Span);
  }
  forceFlush = () => Promise.resolve();
  shutdown = () => Promise.resolve();
}

let providers: BasicTracerProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.map((p) => p.shutdown()));
  providers = [];
});

function setup(options: Omit<OtelTracingOptions, 'tracer'> = {}) {
  const exporter = new InMemorySpanExporter();
  const open = new OpenSpans();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), open] });
  providers.push(provider);
  const tracing = otelTracing({ tracer: provider.getTracer('troupe-test'), ...options });
  return { exporter, open, tracing, spans: () => exporter.getFinishedSpans() };
}

const id = (s: ReadableSpan) => s.spanContext().spanId;
const parentId = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;

/** The span tree as indented lines: name, then the attributes asked for. */
function tree(spans: readonly ReadableSpan[], keys: string[] = []): string {
  const byParent = new Map<string | undefined, ReadableSpan[]>();
  const ids = new Set(spans.map(id));
  for (const s of spans) {
    const p = parentId(s) !== undefined && ids.has(parentId(s)!) ? parentId(s) : undefined;
    byParent.set(p, [...(byParent.get(p) ?? []), s]);
  }
  const lines: string[] = [];
  const visit = (parent: string | undefined, depth: number) => {
    const children = (byParent.get(parent) ?? []).sort((a, b) => ms(a.startTime) - ms(b.startTime) || a.name.localeCompare(b.name));
    for (const s of children) {
      const attrs = keys.filter((k) => s.attributes[k] !== undefined).map((k) => `${k.replace(/^(gen_ai|troupe)\./, '')}=${String(s.attributes[k])}`);
      const status = s.status.code === SpanStatusCode.ERROR ? ' [error]' : '';
      lines.push(`${'  '.repeat(depth)}${s.name}${status}${attrs.length ? ` {${attrs.join(', ')}}` : ''}`);
      visit(id(s), depth + 1);
    }
  };
  visit(undefined, 0);
  return lines.join('\n');
}

describe('troupe/otel', () => {
  it('turns a router to a plan whose chunks have advisors into one span tree with GenAI attributes', async () => {
    const { tracing, spans, open } = setup();
    const clock = new SimulatedClock();
    const adapter = deliveryAdapter(clock);
    const result = await drive(clock, run(deliveryFlow(), 'Add a CSV export', { adapter, clock, runId: 'run-otel', onEvent: tracing.onEvent }));
    expect(result.status).toBe('completed');
    expect(open.open.size).toBe(0);

    const all = spans();
    // One trace, one root.
    expect(new Set(all.map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(all.filter((s) => parentId(s) === undefined)).toHaveLength(1);

    expect(tree(all, ['troupe.chunk.id', 'troupe.chunk.attempt'])).toMatchInlineSnapshot(`
      "invoke_workflow desk
        invoke_workflow desk
          invoke_agent desk
            chat gpt-mini
          invoke_workflow delivery
            invoke_workflow chunk 1 + advisors {chunk.id=1, chunk.attempt=1}
              invoke_agent security {chunk.id=1, chunk.attempt=1}
                chat gpt-mini {chunk.id=1, chunk.attempt=1}
              invoke_agent style {chunk.id=1, chunk.attempt=1}
                chat gpt-mini {chunk.id=1, chunk.attempt=1}
              invoke_agent builder {chunk.id=1, chunk.attempt=1}
                chat gpt-test {chunk.id=1, chunk.attempt=1}
            invoke_workflow chunk 2 + advisors {chunk.id=2, chunk.attempt=1}
              invoke_agent security {chunk.id=2, chunk.attempt=1}
                chat gpt-mini {chunk.id=2, chunk.attempt=1}
              invoke_agent style {chunk.id=2, chunk.attempt=1}
                chat gpt-mini {chunk.id=2, chunk.attempt=1}
              invoke_agent builder {chunk.id=2, chunk.attempt=1}
                chat gpt-test {chunk.id=2, chunk.attempt=1}
                  execute_tool read_file
                chat gpt-test {chunk.id=2, chunk.attempt=1}
            invoke_workflow chunk 3 + advisors [error] {chunk.id=3, chunk.attempt=1}
              invoke_agent security {chunk.id=3, chunk.attempt=1}
                chat gpt-mini {chunk.id=3, chunk.attempt=1}
              invoke_agent style {chunk.id=3, chunk.attempt=1}
                chat gpt-mini {chunk.id=3, chunk.attempt=1}
              invoke_agent builder [error] {chunk.id=3, chunk.attempt=1}
                chat gpt-test [error] {chunk.id=3, chunk.attempt=1}
            invoke_workflow chunk 3 + advisors {chunk.id=3, chunk.attempt=2}
              invoke_agent security {chunk.id=3, chunk.attempt=2}
                chat gpt-mini {chunk.id=3, chunk.attempt=2}
              invoke_agent style {chunk.id=3, chunk.attempt=2}
                chat gpt-mini {chunk.id=3, chunk.attempt=2}
              invoke_agent builder {chunk.id=3, chunk.attempt=2}
                chat gpt-test {chunk.id=3, chunk.attempt=2}
            invoke_workflow chunk 4 + advisors {chunk.id=4, chunk.attempt=1}
              invoke_agent security {chunk.id=4, chunk.attempt=1}
                chat gpt-mini {chunk.id=4, chunk.attempt=1}
              invoke_agent style {chunk.id=4, chunk.attempt=1}
                chat gpt-mini {chunk.id=4, chunk.attempt=1}
              invoke_agent builder {chunk.id=4, chunk.attempt=1}
                chat gpt-test {chunk.id=4, chunk.attempt=1}"
    `);

    const byName = (name: string) => all.filter((s) => s.name === name);
    const root = all.find((s) => parentId(s) === undefined)!;
    expect(root.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_workflow', 'gen_ai.workflow.name': 'desk', 'troupe.op.kind': 'run', 'troupe.run.id': 'run-otel', 'troupe.outcome.status': 'completed' });
    // The router agent's choice is an event on its span.
    const routerAgent = byName('invoke_agent desk')[0]!;
    expect(routerAgent.events.map((e) => [e.name, e.attributes?.['troupe.router.destination']])).toEqual([['troupe.router.selected', 'delivery']]);
    const plan = byName('invoke_workflow delivery')[0]!;
    expect(plan.attributes).toMatchObject({ 'troupe.op.kind': 'plan', 'troupe.plan.id': 'delivery', 'troupe.plan.chunks': 4, 'troupe.outcome.status': 'completed' });
    // Every chunk transition is an event on the plan span, the retry included.
    const chunk3 = plan.events.filter((e) => e.attributes?.['troupe.chunk.id'] === '3').map((e) => `${String(e.attributes?.['troupe.chunk.status'])}#${String(e.attributes?.['troupe.chunk.attempt'])}`);
    expect(chunk3).toEqual(['waiting-for-dependencies#0', 'queued#0', 'running#1', 'retrying#1', 'queued#1', 'running#2', 'completed#2']);

    const builder = byName('invoke_agent builder')[0]!;
    expect(builder.kind).toBe(0); // INTERNAL
    expect(builder.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'builder', 'troupe.plan.id': 'delivery', 'troupe.op.kind': 'agent' });
    // Model calls carry gen_ai.usage; the ops above them carry their roll-up as troupe.usage only.
    const chats = byName('chat gpt-test');
    const firstChat = chats[0]!;
    expect(firstChat.kind).toBe(2); // CLIENT
    expect(firstChat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.agent.name': 'builder',
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 25,
      'gen_ai.response.finish_reasons': ['stop'],
      'troupe.usage.cost_usd': 0.0015,
    });
    expect(builder.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
    expect(builder.attributes).toMatchObject({ 'troupe.usage.input_tokens': 100, 'troupe.usage.output_tokens': 25, 'troupe.usage.turns': 1 });
    const inputTokens = all.reduce((sum, s) => sum + Number(s.attributes['gen_ai.usage.input_tokens'] ?? 0), 0);
    expect(inputTokens).toBe(result.usage.inputTokens);
    expect(root.attributes['troupe.usage.input_tokens']).toBe(result.usage.inputTokens);

    const tool = byName('execute_tool read_file')[0]!;
    expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'read_file', 'gen_ai.tool.call.id': 'call-read', 'gen_ai.tool.type': 'function' });
    const asker = all.find((s) => id(s) === parentId(tool))!;
    expect(asker.attributes['gen_ai.response.finish_reasons']).toEqual(['tool_call']);

    // Times come from the run's clock: a turn spans its latency, from the previous boundary to its end.
    const deskChat = byName('chat gpt-mini')[0]!;
    expect([ms(deskChat.startTime), ms(deskChat.endTime)].map((t) => t - ms(root.startTime))).toEqual([0, 10]);
    expect(ms(asker.endTime) - ms(asker.startTime)).toBe(10);

    // No prompt or answer text unless asked for.
    for (const s of all) {
      for (const key of ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result']) {
        expect(s.attributes[key]).toBeUndefined();
      }
    }
  });

  it('records the error on the failed spans: status, error.type and the exception', async () => {
    const { tracing, spans } = setup();
    const clock = new SimulatedClock();
    await drive(clock, run(deliveryFlow(), 'Add a CSV export', { adapter: deliveryAdapter(clock), clock, onEvent: tracing.onEvent }));
    const failed = spans().filter((s) => s.status.code === SpanStatusCode.ERROR);
    expect(failed.map((s) => s.name).sort()).toEqual(['chat gpt-test', 'invoke_agent builder', 'invoke_workflow chunk 3 + advisors']);
    for (const s of failed) {
      expect(s.status.message).toContain('The model service is overloaded');
      expect(s.events.find((e) => e.name === 'exception')?.attributes?.['exception.message']).toContain('The model service is overloaded');
    }
    expect(failed.find((s) => s.name === 'invoke_agent builder')!.attributes).toMatchObject({ 'error.type': 'adapter_error', 'troupe.outcome.status': 'failed' });
  });

  it('records prompts and answers only with captureContent', async () => {
    const { tracing, spans } = setup({ captureContent: true });
    const clock = new SimulatedClock();
    await drive(clock, run(deliveryFlow(), 'Add a CSV export', { adapter: deliveryAdapter(clock), clock, onEvent: tracing.onEvent }));
    const all = spans();
    const root = all.find((s) => parentId(s) === undefined)!;
    expect(JSON.parse(String(root.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'Add a CSV export' }] }]);
    const askTool = all.find((s) => s.name === 'chat gpt-test' && s.attributes['gen_ai.response.finish_reasons']?.toString() === 'tool_call')!;
    expect(JSON.parse(String(askTool.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'call-read', name: 'read_file', arguments: { path: 'src/export.ts' } }], finish_reason: 'tool_call' },
    ]);
    const tool = all.find((s) => s.name === 'execute_tool read_file')!;
    expect(tool.attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"path":"src/export.ts"}', 'gen_ai.tool.call.result': 'contents of src/export.ts' });
    const answer = all.find((s) => s.name === 'chat gpt-test' && s.attributes['gen_ai.input.messages']?.toString().includes('tool_call_response'))!;
    expect(JSON.parse(String(answer.attributes['gen_ai.input.messages']))).toEqual([{ role: 'tool', parts: [{ type: 'tool_call_response', id: 'call-read', response: 'contents of src/export.ts' }] }]);
    const builder = all.find((s) => s.name === 'invoke_agent builder' && s.attributes['troupe.chunk.id'] === '1')!;
    expect(String(builder.attributes['gen_ai.input.messages'])).toContain('Design the CSV export.');
    expect(String(builder.attributes['gen_ai.output.messages'])).toContain('Done: ## ORIGINAL USER REQUEST');
  });

  it('ends every span of a cancelled run, marked cancelled', async () => {
    const { tracing, spans, open } = setup();
    const adapter = scriptedAdapter({ replies: { slow: [{ fault: 'hang' }] } });
    const handle = startRun(agent({ name: 'slow' }), 'Think hard', { adapter, onEvent: tracing.onEvent });
    for await (const event of handle) if (event.type === 'agent.started') break;
    handle.cancel();
    await expect(handle.result).rejects.toMatchObject({ code: 'cancelled' });
    expect(open.open.size).toBe(0);
    const all = spans();
    // The turn in flight never reported back (the session was cut off), so it has no span of its own.
    expect(all.map((s) => s.name).sort()).toEqual(['invoke_agent slow', 'invoke_workflow slow']);
    for (const s of all) expect(s.status.code).toBe(SpanStatusCode.ERROR);
    expect(all.find((s) => s.name === 'invoke_agent slow')!.attributes).toMatchObject({ 'troupe.outcome.status': 'cancelled', 'error.type': 'cancelled' });
    // A cancellation is not an exception.
    expect(all.find((s) => s.name === 'invoke_agent slow')!.events.some((e) => e.name === 'exception')).toBe(false);
  });

  it('end() closes the spans of a run that never reported its end', () => {
    const { tracing, spans, open } = setup();
    tracing.onEvent({ type: 'run.started', runId: 'r', time: 1000, opId: 'op-0', runnable: 'flow', input: 'x' });
    tracing.onEvent({ type: 'op.started', runId: 'r', time: 1005, opId: 'op-1', kind: 'agent', name: 'a', agent: 'a', parentId: 'op-0', depth: 1 });
    expect(open.open.size).toBe(2);
    tracing.end();
    expect(open.open.size).toBe(0);
    // Ended at the run's last event, on the run's clock.
    expect(spans().map((s) => [s.name, s.attributes['troupe.outcome.status'], ms(s.endTime)])).toEqual([
      ['invoke_agent a', 'cancelled', 1005],
      ['invoke_workflow flow', 'cancelled', 1005],
    ]);
  });

  it('tags the spans of each loop iteration', async () => {
    const { tracing, spans } = setup();
    const writer = agent({ name: 'writer', model: 'gpt-test' });
    const judge = agent({ name: 'judge', model: 'gpt-test' });
    const adapter = scriptedAdapter({ replies: { writer: ['Draft one', 'Draft two'], judge: ['FAIL: too short', 'PASS'] } });
    const loop = reflect(writer, { name: 'essay', evaluator: judge, maxIterations: 3 });
    await run(loop, 'Write an essay', { adapter, onEvent: tracing.onEvent });
    const chats = spans().filter((s) => s.name === 'chat gpt-test');
    expect(chats.map((s) => `${String(s.attributes['gen_ai.agent.name'])}@${String(s.attributes['troupe.iteration'])}`)).toEqual(['writer@1', 'judge@1', 'writer@2', 'judge@2']);
    const loopSpan = spans().find((s) => s.attributes['troupe.op.kind'] === 'reflect')!;
    expect(loopSpan.events.filter((e) => e.name === 'troupe.evaluation').map((e) => e.attributes?.['troupe.evaluation.score'])).toEqual([0, 1]);
  });

  it('carries the trace context to another process: the worker run joins the coordinator trace under the plan', async () => {
    const propagator = new W3CTraceContextPropagator();
    const coordinator = setup({ propagator });
    const worker = setup();
    let carried = '';
    let workerParent: Context | undefined;
    const clock = new SimulatedClock();
    const adapter = deliveryAdapter(clock);
    const flow = deliveryFlow({
      runChunk: async (input) => {
        // What a queue-backed executor does: put the carrier in the job (JSON), and on the worker extract it.
        carried = JSON.stringify({ chunk: input.chunk.sequenceIndex, traceContext: coordinator.tracing.inject({ runId: input.ctx.runId, opId: input.ctx.op.id }) });
        const job = JSON.parse(carried) as { traceContext: Record<string, string> };
        workerParent = extractTraceContext(job.traceContext, propagator);
        const remote = otelTracing({ tracer: providers.at(-1)!.getTracer('worker'), parent: workerParent });
        const out = await run(agent({ name: 'remote-builder' }), input.prompt, { adapter: scriptedAdapter({ fallback: 'built remotely' }), onEvent: remote.onEvent });
        return out.output;
      },
    });
    await drive(clock, run(flow, 'Add a CSV export', { adapter, clock, onEvent: coordinator.tracing.onEvent }));
    expect(JSON.parse(carried).traceContext.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const plan = coordinator.spans().find((s) => s.name === 'invoke_workflow delivery')!;
    const remoteRoots = worker.spans().filter((s) => s.name === 'invoke_workflow remote-builder');
    expect(remoteRoots).toHaveLength(4);
    for (const r of remoteRoots) {
      expect(r.spanContext().traceId).toBe(plan.spanContext().traceId);
      expect(parentId(r)).toBe(id(plan));
    }
    // Unknown runs inject nothing, and an empty carrier extracts to the base context.
    expect(coordinator.tracing.inject({ runId: 'nope' })).toEqual({});
    expect(extractTraceContext({}, propagator)).toBeDefined();
  });

  it('refuses bad options with a typed error', () => {
    expect(() => otelTracing({ tracer: {} as never })).toThrow(/Expected `tracer` to be an OpenTelemetry Tracer/);
    expect(() => otelTracing({ captureContent: 'yes' as never })).toThrow(/Expected `captureContent` to be a boolean/);
    expect(() => otelTracing({ parent: 'root' as never })).toThrow(/Expected `parent` to be an OpenTelemetry Context/);
    expect(() => otelTracing({ propagator: {} as never })).toThrow(/Expected `propagator` to be a TextMapPropagator/);
  });
});
