import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { router } from '../../src/patterns/router.js';

/** Fails every turn on the models in `down`, answers on the others with the model's name. */
const modelsDown = (...down: string[]) =>
  scriptedAdapter({
    fallback: (req) => (down.includes(req.spec.model ?? '') ? { fault: 'throw', error: `${req.spec.model} is overloaded` } : `answered by ${req.spec.model}`),
  });

describe('model fallback', () => {
  it('reopens the session on the next model when the first turn fails, and says so in a warning', async () => {
    const adapter = modelsDown('big', 'medium');
    const events: TroupeEvent[] = [];
    const result = await run(agent({ name: 'a', models: ['big', 'medium', 'small'] }), 'hi', { adapter, onEvent: (e) => events.push(e) });
    expect(result.output).toBe('answered by small');
    expect(adapter.calls.map((c) => c.spec.model)).toEqual(['big', 'medium', 'small']);
    expect(adapter.calls.map((c) => c.text)).toEqual(['hi', 'hi', 'hi']);
    const warnings = events.filter((e) => e.type === 'warning');
    expect(warnings.map((w) => (w as { data?: unknown }).data)).toEqual([
      { agent: 'a', from: 'big', to: 'medium' },
      { agent: 'a', from: 'medium', to: 'small' },
    ]);
    expect(warnings[0]).toMatchObject({ code: 'model_fallback', message: 'Agent "a": model "big" failed (big is overloaded); trying "medium"' });
  });

  it('tries `model` first, then `models`; fails with the last error when every model fails', async () => {
    const adapter = modelsDown('x', 'y');
    await expect(run(agent({ name: 'a', model: 'x', models: ['y'] }), 'hi', { adapter })).rejects.toThrow('y is overloaded');
    expect(adapter.calls.map((c) => c.spec.model)).toEqual(['x', 'y']);
  });

  it('keeps the model once a turn has succeeded', async () => {
    let first = true;
    const adapter = scriptedAdapter({
      fallback: () => {
        if (first) {
          first = false;
          return 'hello';
        }
        return { fault: 'throw', error: 'lost' };
      },
    });
    const a = agent({ name: 'a', models: ['big', 'small'] });
    await expect(
      run({ name: 'two-turns', kind: 'test', run: async (input, ctx) => {
        const c = await a.converse(ctx);
        try {
          await c.send(input);
          return { ...(await c.send('again').then((r) => ({ output: r.text }))), agent: 'a', status: 'completed' as const, usage: ctx.op.usage };
        } finally {
          await c.close();
        }
      } }, 'hi', { adapter }),
    ).rejects.toThrow('lost');
    expect(adapter.calls.map((c) => c.spec.model)).toEqual(['big', 'big']);
  });

  it('does not fall back on cancellation', async () => {
    const controller = new AbortController();
    const adapter = scriptedAdapter({
      fallback: () => {
        controller.abort();
        return { fault: 'hang' };
      },
    });
    const pending = run(agent({ name: 'a', models: ['big', 'small'] }), 'hi', { adapter, signal: controller.signal });
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    expect(adapter.calls.map((c) => c.spec.model)).toEqual(['big']);
  });

  it('holds for patterns that open sessions themselves: a router agent decides on its fallback model', async () => {
    const adapter = scriptedAdapter({
      capabilities: { tools: false },
      rules: [
        { agent: 'desk', match: () => true, reply: (req) => (req.spec.model === 'big' ? { fault: 'throw', error: 'big is down' } : 'ROUTE: billing') },
        { agent: 'billing', reply: 'Refunded.' },
      ],
    });
    const desk = agent({ name: 'desk', models: ['big', 'small'] });
    const result = await run(router(desk, [agent({ name: 'billing' })]), 'charged twice', { adapter });
    expect(result).toMatchObject({ output: 'Refunded.', destination: 'billing' });
    expect(adapter.inputsOf('desk')).toHaveLength(2);
  });

  it('validates `models`', () => {
    expect(() => agent({ name: 'a', models: ['ok', ''] })).toThrow('Expected `models` to be a list of non-empty strings');
  });
});
