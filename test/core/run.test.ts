import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SimulatedClock } from '../../src/core/clock.js';
import { defineRunnable, type Runnable } from '../../src/core/runnable.js';
import { run, startRun } from '../../src/core/run.js';
import { usageByAgent, usageByKind } from '../../src/core/ops.js';
import { defineTool } from '../../src/core/tools.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { agent } from '../../src/patterns/agent.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';

describe('run', () => {
  it('returns the outcome with run id, trace and rolled-up usage', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'a', reply: { text: 'A says hi', usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.01 } } }, { agent: 'b', reply: { text: 'B', usage: { inputTokens: 1, outputTokens: 2 } } }] });
    const a = agent({ name: 'a' });
    const b = agent({ name: 'b' });
    const both = defineRunnable({
      name: 'both',
      kind: 'pair',
      async run(input, ctx) {
        const x = await a.run(input, ctx);
        const y = await b.run(x.output, ctx);
        return { output: y.output, agent: y.agent, status: 'completed' };
      },
    });
    const result = await run(both, 'hi', { adapter, runId: 'r1' });
    expect(result.runId).toBe('r1');
    expect(result.output).toBe('B');
    expect(result.agent).toBe('b');
    expect(result.usage).toMatchObject({ inputTokens: 11, outputTokens: 7, costUsd: 0.01, turns: 2 });
    expect(result.trace.kind).toBe('run');
    const pair = result.trace.children[0]!;
    expect(pair.kind).toBe('pair');
    expect(pair.children.map((c) => c.name)).toEqual(['a', 'b']);
    expect(usageByAgent(result.trace)).toMatchObject({ a: { inputTokens: 10 }, b: { outputTokens: 2 } });
    expect(usageByKind(result.trace).agent).toMatchObject({ inputTokens: 11 });
  });

  it('emits typed events and exposes them as an async iterator', async () => {
    const adapter = scriptedAdapter({ fallback: 'ok' });
    const handle = startRun(agent({ name: 'a' }), 'hi', { adapter });
    const types: string[] = [];
    for await (const e of handle) types.push(e.type);
    await handle.result;
    expect(types[0]).toBe('run.started');
    expect(types).toContain('agent.started');
    expect(types).toContain('agent.turn');
    expect(types).toContain('session.event');
    expect(types.at(-1)).toBe('run.completed');
  });

  it('stops runaway recursion with the depth guard', async () => {
    const loop: Runnable = defineRunnable({ name: 'loop', kind: 'loop', run: (input, ctx) => loop.run(input, ctx) });
    await expect(run(loop, 'x', { maxDepth: 5 })).rejects.toMatchObject({ code: 'depth_exceeded' });
  });

  it('validates options with clear messages', () => {
    expect(() => run(agent({ name: 'a' }), 'x', { timeoutMs: -1 })).toThrow('Expected `timeoutMs` to be a positive number, got -1 (number)');
    expect(() => run(agent({ name: 'a' }), 'x', { timeoutMs: Infinity })).toThrow(
      'Expected `timeoutMs` to be a finite number of milliseconds, got Infinity (number); leave it out for no time-out',
    );
    expect(() => agent({ name: 'a', timeoutMs: Number.NaN })).toThrow('Expected `timeoutMs` to be a finite number of milliseconds, got NaN (number)');
    expect(() => agent({ name: '' })).toThrow(/non-empty string/);
    expect(() => agent({ name: 'a', maxTurns: 0 })).toThrow(/maxTurns/);
  });

  it('fails with a configuration error when no adapter is given', async () => {
    await expect(run(agent({ name: 'a' }), 'x')).rejects.toMatchObject({ code: 'unknown_adapter' });
    await expect(run(agent({ name: 'a', adapter: 'nope' }), 'x')).rejects.toThrow(/not registered/);
  });

  it('resolves named adapters', async () => {
    const other = scriptedAdapter({ id: 'other', fallback: 'from other' });
    const result = await run(agent({ name: 'a', adapter: 'other' }), 'x', { adapters: { other } });
    expect(result.output).toBe('from other');
  });

  it('times out on the injected clock', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ fallback: { text: 'late', delayMs: 5000 }, clock });
    const p = run(agent({ name: 'a' }), 'x', { adapter, clock, timeoutMs: 1000 });
    p.catch(() => undefined);
    await clock.advance(1000);
    await expect(p).rejects.toMatchObject({ code: 'timeout' });
  });

  it('cancels: no model call after the abort', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ fallback: { text: 'x', delayMs: 100 }, clock });
    const a = agent({ name: 'a' });
    const b = agent({ name: 'b' });
    const chain = defineRunnable({
      name: 'chain',
      kind: 'chain',
      async run(input, ctx) {
        const x = await a.run(input, ctx);
        return b.run(x.output, ctx);
      },
    });
    const controller = new AbortController();
    const p = run(chain, 'go', { adapter, clock, signal: controller.signal });
    p.catch(() => undefined);
    await clock.advance(50);
    controller.abort();
    await expect(p).rejects.toMatchObject({ code: 'cancelled' });
    await clock.runAll();
    expect(adapter.calls.map((c) => c.agent)).toEqual(['a']);
  });

  it('a throwing event listener does not break the run', async () => {
    const adapter = scriptedAdapter({ fallback: 'ok' });
    const warnings: TroupeEvent[] = [];
    const handle = startRun(agent({ name: 'a' }), 'x', { adapter });
    handle.emitter.on('agent.started', () => {
      throw new Error('listener bug');
    });
    handle.emitter.on('warning', (e) => warnings.push(e));
    await expect(handle.result).resolves.toMatchObject({ output: 'ok' });
    expect(warnings[0]).toMatchObject({ code: 'listener_error' });
  });
});

describe('tool loop', () => {
  const add = defineTool({
    name: 'add',
    description: 'Add',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => a + b,
  });
  const boom = defineTool({
    name: 'boom',
    description: 'Throws',
    parameters: z.object({}),
    execute: () => {
      throw new Error('kaput');
    },
  });

  it('runs calls in parallel, sends results back, and returns the final text', async () => {
    const adapter = scriptedAdapter({
      replies: {
        calc: [
          { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }, { name: 'add', arguments: { a: 3, b: 4 } }] },
          (req) => `results: ${req.text}`,
        ],
      },
    });
    const result = await run(agent({ name: 'calc', tools: [add] }), 'sum', { adapter });
    expect(result.output).toContain('3');
    expect(result.output).toContain('7');
    expect(result.usage.turns).toBe(2);
    expect(adapter.sessions[0]!.tools![0]!.parameters).toMatchObject({ type: 'object', properties: { a: { type: 'number' } } });
  });

  it('returns tool failures, unknown tools, bad arguments and malformed calls to the model as errors', async () => {
    const adapter = scriptedAdapter({
      replies: {
        calc: [
          {
            toolCalls: [
              { name: 'boom', arguments: {} },
              { name: 'nope', arguments: {} },
              { name: 'add', arguments: { a: 'x' } },
            ],
          },
          { fault: 'malformed-tool-call', toolCalls: [{ name: 'add' }] },
          (req) => req.text,
        ],
      },
    });
    const result = await run(agent({ name: 'calc', tools: [add, boom] }), 'go', { adapter });
    const inputs = adapter.inputsOf('calc');
    expect(inputs[1]).toContain('[tool error boom');
    expect(inputs[1]).toContain('Error: kaput');
    expect(inputs[1]).toContain('unknown tool "nope". Available tools: add, boom');
    expect(inputs[1]).toContain('invalid arguments for "add"');
    expect(result.output).toContain('not valid JSON');
  });

  it('fails with a typed error at maxTurns', async () => {
    const adapter = scriptedAdapter({ fallback: { toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] } });
    await expect(run(agent({ name: 'calc', tools: [add], maxTurns: 3 }), 'go', { adapter })).rejects.toMatchObject({
      code: 'max_turns_exceeded',
      name: 'MaxTurnsExceededError',
    });
    expect(adapter.calls).toHaveLength(3);
  });

  it('refuses tools on an adapter without tool support', async () => {
    const adapter = scriptedAdapter({ fallback: 'x', capabilities: { tools: false } });
    await expect(run(agent({ name: 'calc', tools: [add] }), 'go', { adapter })).rejects.toThrow(/does not support tools/);
  });
});
