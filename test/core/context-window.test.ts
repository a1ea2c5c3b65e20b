import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelAdapter } from '../../src/core/adapter.js';
import { replayAdapter } from '../../src/adapters/recording.js';
import { inputText, scriptedAdapter, type ScriptedRequest } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { estimateTokens } from '../../src/core/context-window.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { run } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';
import { agent } from '../../src/patterns/agent.js';
import { orchestrate } from '../../src/patterns/orchestrate.js';
import { exportRun } from '../../src/persistence/run-log.js';

const REQUEST = 'Build a shop with a cart and a checkout.';
const SYSTEM = 'You lead a team of three.';

/** Text after a compacted history (what the new message asks). */
const current = (req: ScriptedRequest) => req.text.slice(req.text.lastIndexOf('[The conversation continues]') + 1);

/** A lead that plans for three workers and asks for another iteration; workers that answer at length. */
function shop(answerChars: number) {
  let iteration = 0;
  return scriptedAdapter({
    rules: [
      {
        agent: 'lead',
        reply: (r) =>
          current(r).includes('## WORKER RESULTS')
            ? `Synthesis of iteration ${iteration}: ${'s'.repeat(200 + iteration)} ${iteration} [[NEEDS_ITERATION]]`
            : `${['a', 'b', 'c'].map((w) => `@worker:${w}\nPart ${++iteration} for ${w}\n@end`).join('\n')}`,
      },
      { agent: /^[abc]$/, reply: (r) => `${r.agent} answers ${r.text.length}: ${'x'.repeat(answerChars)}` },
    ],
  });
}

/** Every call's whole context as a chat API would get it (system, earlier inputs and replies, input), in estimated tokens, per agent. */
function measuring(inner: ModelAdapter, sizes: Record<string, number[]>): ModelAdapter {
  return {
    id: inner.id,
    capabilities: inner.capabilities,
    async openSession(spec, options) {
      const session = await inner.openSession(spec, options);
      let history = estimateTokens(spec.system ?? '');
      return {
        id: session.id,
        async send(input, options) {
          const sent = history + estimateTokens(inputText(input));
          (sizes[spec.agent] ??= []).push(sent);
          const turn = await session.send(input, options);
          history = sent + estimateTokens(turn.text);
          return turn;
        },
        close: () => session.close(),
      };
    },
  };
}

function loop(context?: { maxTokens: number }) {
  return orchestrate({
    lead: agent({ name: 'lead', system: SYSTEM, ...(context ? { context } : {}) }),
    workers: ['a', 'b', 'c'].map((name) => agent({ name })),
    maxIterations: 10,
    autoAdjust: false,
  });
}

describe('context budgets', () => {
  it('keeps the lead of a 10-iteration orchestration with three workers under its budget, dropping earlier worker results first', async () => {
    const unbounded: Record<string, number[]> = {};
    await run(loop(), REQUEST, { adapter: measuring(shop(1200), unbounded) });
    const sizes: Record<string, number[]> = {};
    const events: TroupeEvent[] = [];
    const live = shop(1200);
    const result = await run(loop({ maxTokens: 3000 }), REQUEST, { adapter: measuring(live, sizes), onEvent: (e) => events.push(e) });
    expect(result.iterations).toBe(10);
    expect(Math.max(...unbounded.lead!)).toBeGreaterThan(9000);
    expect(Math.max(...sizes.lead!)).toBeLessThanOrEqual(3000);
    const compactions = events.filter((e) => e.type === 'context.compacted');
    expect(compactions.length).toBeGreaterThan(0);
    for (const c of compactions) {
      expect(c).toMatchObject({ agent: 'lead', budget: 3000, strategy: 'drop' });
      expect(c.after).toBeLessThanOrEqual(3000);
      expect(c.before).toBeGreaterThan(3000);
    }
    // Worker results of earlier iterations go before anything else.
    expect(compactions[0]!.dropped.results).toBeGreaterThan(0);
    // Each compaction continues in a new session of the lead whose first message holds the request verbatim; the system prompt stays in the spec.
    const leadSessions = live.sessions.filter((s) => s.agent === 'lead');
    expect(leadSessions).toHaveLength(compactions.length + 1);
    expect(leadSessions.every((s) => s.system === SYSTEM)).toBe(true);
    const firsts = live.calls.filter((c) => c.agent === 'lead' && c.turn === 1).slice(1);
    for (const first of firsts) {
      expect(first.text.startsWith('[The conversation so far, compacted to fit the context budget]')).toBe(true);
      expect(first.text).toContain(`## ORIGINAL USER REQUEST\n${REQUEST}`);
    }
    // The latest iteration is verbatim: a compaction before a synthesis keeps that iteration's plan and reply whole.
    const beforeSynthesis = firsts.find((f) => f.text.slice(f.text.lastIndexOf('[The conversation continues]')).includes('## WORKER RESULTS'));
    if (beforeSynthesis) expect(beforeSynthesis.text).toMatch(/@worker:a\nPart \d+ for a\n@end/);
  });

  it('total input grows linearly with the iterations once the budget binds', async () => {
    const total = async (iterations: number, context?: { maxTokens: number }) => {
      const sizes: Record<string, number[]> = {};
      const flow = orchestrate({
        lead: agent({ name: 'lead', system: SYSTEM, ...(context ? { context } : {}) }),
        workers: ['a', 'b', 'c'].map((name) => agent({ name })),
        maxIterations: iterations,
        autoAdjust: false,
      });
      await run(flow, REQUEST, { adapter: measuring(shop(1200), sizes) });
      return sizes.lead!.reduce((a, b) => a + b, 0);
    };
    const [free10, free20, bound10, bound20] = [await total(10), await total(20), await total(10, { maxTokens: 3000 }), await total(20, { maxTokens: 3000 })];
    expect(free20 / free10).toBeGreaterThan(3.5); // quadratic: twice the iterations, about four times the input
    expect(bound20 / bound10).toBeLessThan(2.3); // linear
  });

  it('summarises earlier turns with a summariser agent, keeping the request and the latest exchange', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'notes', reply: 'SUMMARY: the user asked twice; answers given.' },
        { agent: 'chat', reply: (r) => `reply ${r.turn}: ${'y'.repeat(800)}` },
      ],
    });
    const summarizer = agent({ name: 'notes', system: 'Summarise.' });
    const chat = agent({ name: 'chat', system: 'Be helpful.', context: { maxTokens: 400, summarizer } });
    const events: TroupeEvent[] = [];
    const outcome = await run(
      {
        name: 'talk',
        kind: 'custom',
        run: (input, ctx) =>
          ctx.enter({ kind: 'custom', name: 'talk' }, async (inner) => {
            const conversation = await chat.converse(inner);
            try {
              for (const message of [input, 'second question', 'third question']) await conversation.send(message);
              return { output: (await conversation.send('last question')).text, agent: 'chat', status: 'completed' as const };
            } finally {
              await conversation.close();
            }
          }),
      },
      'first question',
      { adapter, onEvent: (e) => events.push(e) },
    );
    expect(outcome.output).toMatch(/^reply \d: y/);
    const compacted = events.filter((e) => e.type === 'context.compacted');
    expect(compacted.length).toBeGreaterThan(0);
    expect(compacted[0]).toMatchObject({ strategy: 'summary', agent: 'chat' });
    const notes = adapter.calls.filter((c) => c.agent === 'notes');
    expect(notes.length).toBe(compacted.length);
    expect(notes[0]!.text).toContain('second question');
    const reopened = adapter.calls.filter((c) => c.agent === 'chat' && c.turn === 1).slice(1);
    expect(reopened[0]!.text).toContain('first question'); // the request, verbatim
    expect(reopened[0]!.text).toContain('SUMMARY: the user asked twice');
    expect(reopened[0]!.text).not.toContain('second question');
  });

  it('drops tool output of earlier exchanges first', async () => {
    const big = defineTool({ name: 'fetch', description: 'fetch', parameters: z.object({}), execute: () => 'T'.repeat(1600) });
    let n = 0;
    const adapter = scriptedAdapter({
      // A question asks for the tool; its result (sent as is, or as text after a compaction) gets an answer.
      rules: [{ agent: 'reader', reply: (r) => (typeof r.input === 'string' && current(r).includes('question') ? { toolCalls: [{ name: 'fetch', arguments: {} }] } : `answer ${++n}`) }],
    });
    const reader = agent({ name: 'reader', tools: [big], context: { maxTokens: 700 } });
    const events: TroupeEvent[] = [];
    await run(
      {
        name: 'read',
        kind: 'custom',
        run: (input, ctx) =>
          ctx.enter({ kind: 'custom', name: 'read' }, async (inner) => {
            const conversation = await reader.converse(inner);
            try {
              await conversation.send(input);
              return { output: (await conversation.send('next question')).text, agent: 'reader', status: 'completed' as const };
            } finally {
              await conversation.close();
            }
          }),
      },
      'first question',
      { adapter, onEvent: (e) => events.push(e) },
    );
    const compacted = events.find((e) => e.type === 'context.compacted');
    expect(compacted).toMatchObject({ strategy: 'drop', dropped: { toolOutputs: 1, results: 0 } });
  });

  it('replays a run with compactions exactly, with zero model calls', async () => {
    const store = memoryStore();
    const live = shop(1200);
    const original = await run(loop({ maxTokens: 3000 }), REQUEST, { adapter: live, store, runId: 'live', clock: new SimulatedClock() });
    const exported = JSON.parse(JSON.stringify(await exportRun('live', { store }))) as Awaited<ReturnType<typeof exportRun>>;
    const logged = exported.events.filter((e) => (e as { type: string }).type === 'context.compacted');
    expect(logged.length).toBeGreaterThan(0);
    const replay = replayAdapter(exported);
    const events: TroupeEvent[] = [];
    const again = await run(loop({ maxTokens: 3000 }), REQUEST, { adapter: replay, clock: new SimulatedClock(), onEvent: (e) => events.push(e) });
    expect(replay.remaining).toBe(0);
    expect(replay.served).toBe(live.calls.length);
    expect(again.output).toBe(original.output);
    const strip = (e: object) => {
      const { runId: _r, time: _t, opId: _o, ...rest } = e as Record<string, unknown>;
      return rest;
    };
    expect(events.filter((e) => e.type === 'context.compacted').map(strip)).toEqual(logged.map(strip));
  });

  it('refuses a context budget that is not a positive integer', () => {
    expect(() => agent({ name: 'x', context: { maxTokens: 0 } })).toThrow(/context.maxTokens/);
    expect(() => agent({ name: 'x', budget: { costUsd: -1 } })).toThrow(/budget.costUsd/);
    expect(() => agent({ name: 'x', budget: { tokens: 5 } as never })).toThrow(/Unknown limit `budget.tokens`/);
  });
});
