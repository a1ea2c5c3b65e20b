import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock, sleep } from '../../src/core/clock.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { walk, type OpNode } from '../../src/core/ops.js';
import { run, startRun } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';
import {
  GuardrailTripError,
  defineGuardrail,
  defineToolGuardrail,
  withGuardrails,
  type GuardrailVerdict,
} from '../../src/guardrails/index.js';
import { agent } from '../../src/patterns/agent.js';
import { asTool } from '../../src/patterns/as-tool.js';
import { handoff } from '../../src/patterns/handoff.js';
import { orchestrate } from '../../src/patterns/orchestrate.js';
import { readRun } from '../../src/persistence/run-log.js';

const blockWord = (name: string, word: string) =>
  defineGuardrail({ name, check: (text): GuardrailVerdict => ({ tripped: text.includes(word), ...(text.includes(word) ? { reason: `mentions ${word}` } : {}) }) });

/** A guardrail that decides after `ms` on the clock. */
const slowGuardrail = (clock: SimulatedClock, ms: number, tripped: boolean) =>
  defineGuardrail({
    name: 'slow',
    async check(_text, { signal }) {
      await sleep(clock, ms, signal);
      return { tripped, reason: tripped ? 'off topic' : 'fine' };
    },
  });

function collect(): { events: TroupeEvent[]; onEvent: (e: TroupeEvent) => void; of<K extends TroupeEvent['type']>(type: K): Array<TroupeEvent<K>> } {
  const events: TroupeEvent[] = [];
  return {
    events,
    onEvent: (e) => void events.push(e),
    of: <K extends TroupeEvent['type']>(type: K) => events.filter((e) => e.type === type) as unknown as Array<TroupeEvent<K>>,
  };
}

async function tripOf(promise: Promise<unknown>): Promise<GuardrailTripError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GuardrailTripError);
  return error as GuardrailTripError;
}

const opNames = (trace: OpNode) => {
  const names: string[] = [];
  walk(trace, (n) => void names.push(`${n.kind}:${n.name}:${n.status}`));
  return names;
};

describe('input guardrails', () => {
  it('a trip before the model: the run rejects with the typed error naming the guardrail, its verdict and the trace; no model call', async () => {
    const adapter = scriptedAdapter({ fallback: 'never' });
    const seen = collect();
    const guarded = withGuardrails(agent({ name: 'helper' }), { input: [blockWord('no-homework', 'homework')] });
    const error = await tripOf(run(guarded, 'Do my homework', { adapter, onEvent: seen.onEvent }));
    expect(error.code).toBe('guardrail_tripped');
    expect(error.guardrail).toBe('no-homework');
    expect(error.stage).toBe('input');
    expect(error.verdict).toEqual({ tripped: true, reason: 'mentions homework' });
    expect(error.details).toMatchObject({ guardrail: 'no-homework', stage: 'input', runnable: 'helper' });
    expect(error.message).toBe('Guardrail "no-homework" tripped at the input stage of "helper": mentions homework');
    expect(opNames(error.trace)).toEqual(['run:helper:failed', 'guarded:helper:failed']);
    expect(adapter.calls).toHaveLength(0);
    expect(seen.of('guardrail.checked')).toMatchObject([{ guardrail: 'no-homework', stage: 'input', tripped: true, reason: 'mentions homework', runnable: 'helper' }]);
    expect(seen.of('guardrail.tripped')).toMatchObject([{ guardrail: 'no-homework', stage: 'input' }]);
    expect(seen.of('run.failed')).toMatchObject([{ code: 'guardrail_tripped' }]);
  });

  it('a guardrail that passes lets the run go on; its verdict is an event and a run-log record', async () => {
    const adapter = scriptedAdapter({ replies: { helper: ['Paris.'] } });
    const store = memoryStore();
    const guarded = withGuardrails(agent({ name: 'helper' }), { input: [blockWord('no-homework', 'homework')], output: [blockWord('no-swearing', 'darn')] });
    const result = await run(guarded, 'Capital of France?', { adapter, store, runId: 'r1' });
    expect(result.output).toBe('Paris.');
    expect(result.agent).toBe('helper');
    const logged = (await readRun('r1', { store })).events.filter((e) => e.type === 'guardrail.checked');
    expect(logged).toMatchObject([
      { guardrail: 'no-homework', stage: 'input', tripped: false },
      { guardrail: 'no-swearing', stage: 'output', tripped: false },
    ]);
  });

  it('a check that throws fails closed: the run ends with the error as cause', async () => {
    const adapter = scriptedAdapter({ fallback: 'never' });
    const broken = defineGuardrail({ name: 'broken', check: () => { throw new Error('classifier down'); } });
    const error = await tripOf(run(withGuardrails(agent({ name: 'helper' }), { input: [broken] }), 'hi', { adapter }));
    expect(error.verdict).toEqual({ tripped: true, reason: 'The guardrail failed: classifier down' });
    expect((error.cause as Error).message).toBe('classifier down');
    expect(adapter.calls).toHaveLength(0);
  });

  it('in parallel with the first model call: the call starts, its reply is discarded on a trip, and no tool runs', async () => {
    const clock = new SimulatedClock();
    let executed = 0;
    const tool = defineTool({ name: 'lookup', description: 'Look up', parameters: z.object({}), execute: () => void executed++ });
    const adapter = scriptedAdapter({ clock, replies: { helper: [{ toolCalls: [{ name: 'lookup' }], delayMs: 10 }, 'never sent'] } });
    const seen = collect();
    const guarded = withGuardrails(agent({ name: 'helper', tools: [tool] }), { input: [slowGuardrail(clock, 100, true)], parallelInput: true });
    const handle = startRun(guarded, 'Write a poem', { adapter, clock, onEvent: seen.onEvent });
    const settled = tripOf(handle.result);
    await clock.advance(10);
    expect(adapter.calls).toHaveLength(1); // the first call went out alongside the check
    expect(seen.of('agent.turn')).toHaveLength(0); // ... and its reply is held
    await clock.advance(100);
    const error = await settled;
    expect(error.guardrail).toBe('slow');
    expect(executed).toBe(0);
    expect(adapter.calls).toHaveLength(1);
    expect(seen.of('tool.called')).toHaveLength(0);
  });

  it('in parallel: a check that passes releases the held reply, and the run goes on', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, replies: { helper: [{ text: 'A poem.', delayMs: 10 }] } });
    const guarded = withGuardrails(agent({ name: 'helper' }), { input: [slowGuardrail(clock, 100, false)], parallelInput: true });
    const handle = startRun(guarded, 'Write a poem', { adapter, clock });
    await clock.advance(10);
    expect(adapter.calls).toHaveLength(1);
    await clock.advance(100);
    expect((await handle.result).output).toBe('A poem.');
  });
});

describe('output guardrails', () => {
  it('check the final output: a trip ends the run after the answer, naming the output stage', async () => {
    const adapter = scriptedAdapter({ replies: { helper: ['The password is hunter2.'] } });
    const error = await tripOf(run(withGuardrails(agent({ name: 'helper' }), { output: [blockWord('no-secrets', 'password')] }), 'hi', { adapter }));
    expect(error).toMatchObject({ guardrail: 'no-secrets', stage: 'output' });
    expect(opNames(error.trace)).toContain('agent:helper:completed');
  });

  it('on the stream: a trip stops the reply as it arrives; later chunks never stream', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, replies: { helper: [{ chunks: ['Sure, ', 'the password ', 'is hunter2', ' and more'], chunkDelayMs: 10 }] } });
    const seen = collect();
    const guarded = withGuardrails(agent({ name: 'helper' }), { stream: [blockWord('no-secrets', 'password')] });
    const handle = startRun(guarded, 'hi', { adapter, clock, onEvent: seen.onEvent });
    const settled = tripOf(handle.result);
    await clock.runAll();
    const error = await settled;
    expect(error).toMatchObject({ guardrail: 'no-secrets', stage: 'stream' });
    expect(error.details).toMatchObject({ agent: 'helper', runnable: 'helper' });
    const streamed = seen.of('session.event').map((e) => (e.event as { text: string }).text);
    expect(streamed).toEqual(['Sure, ', 'the password ']);
    expect(seen.of('guardrail.checked').map((e) => e.tripped)).toEqual([false, true]);
    expect(seen.of('agent.completed')).toHaveLength(0);
  });

  it('a reply that did not stream is checked whole once', async () => {
    const adapter = scriptedAdapter({ replies: { helper: ['the password is x'] }, capabilities: { streaming: false } });
    const seen = collect();
    const error = await tripOf(run(withGuardrails(agent({ name: 'helper' }), { stream: [blockWord('no-secrets', 'password')] }), 'hi', { adapter, onEvent: seen.onEvent }));
    expect(error.stage).toBe('stream');
    expect(seen.of('guardrail.checked')).toHaveLength(1);
  });
});

describe('tool guardrails', () => {
  const setup = (decide: Parameters<typeof defineToolGuardrail>[0]) => {
    const ran: string[] = [];
    const write = defineTool({ name: 'write_file', description: 'Write', parameters: z.object({ path: z.string() }), execute: ({ path }) => { ran.push(path); return `wrote ${path}`; } });
    const read = defineTool({ name: 'read_file', description: 'Read', parameters: z.object({ path: z.string() }), execute: ({ path }) => { ran.push(path); return `contents of ${path}`; } });
    const adapter = scriptedAdapter({
      replies: { coder: [{ toolCalls: [{ name: 'write_file', arguments: { path: 'a.ts' } }, { name: 'read_file', arguments: { path: 'b.ts' } }] }, 'Done.'] },
    });
    const guarded = withGuardrails(agent({ name: 'coder', tools: [write, read] }), { tools: [defineToolGuardrail(decide)] });
    return { ran, adapter, guarded };
  };

  it('refuse before the call: the tool does not run and the model sees the refusal as an error result', async () => {
    const { ran, adapter, guarded } = setup({ name: 'read-only', tools: ['write_file'], beforeCall: () => ({ action: 'refuse', message: 'Writing is not allowed.' }) });
    const seen = collect();
    const result = await run(guarded, 'Fix it', { adapter, onEvent: seen.onEvent });
    expect(result.output).toBe('Done.');
    expect(ran).toEqual(['b.ts']);
    expect(adapter.calls[1]!.input).toMatchObject([
      { name: 'write_file', content: 'Writing is not allowed.', isError: true },
      { name: 'read_file', content: 'contents of b.ts' },
    ]);
    expect(seen.of('guardrail.checked')).toMatchObject([{ guardrail: 'read-only', stage: 'tool', action: 'refuse', tripped: false, tool: 'write_file', agent: 'coder' }]);
  });

  it('replace the result after the call with a refusal', async () => {
    const { ran, adapter, guarded } = setup({
      name: 'redact',
      afterCall: (call, result) => (result.content.includes('contents') ? { action: 'refuse', message: `The result of ${call.name} was withheld.` } : { action: 'allow' }),
    });
    await run(guarded, 'Fix it', { adapter });
    expect(ran).toEqual(['a.ts', 'b.ts']);
    expect(adapter.calls[1]!.input).toMatchObject([{ content: 'wrote a.ts' }, { content: 'The result of read_file was withheld.', isError: true }]);
  });

  it('stop: the run ends with the trip; the tool does not run and nothing more reaches the model', async () => {
    const { ran, adapter, guarded } = setup({ name: 'no-writes', tools: ['write_file'], beforeCall: (call) => ({ action: 'stop', reason: `tried to write ${(call.arguments as { path: string }).path}` }) });
    const error = await tripOf(run(guarded, 'Fix it', { adapter }));
    expect(error).toMatchObject({ guardrail: 'no-writes', stage: 'tool', verdict: { action: 'stop', reason: 'tried to write a.ts' } });
    expect(error.details).toMatchObject({ tool: 'write_file', agent: 'coder' });
    // The stopped call never ran (read_file, of the same turn and unwatched, had already started).
    expect(ran).not.toContain('a.ts');
    expect(adapter.calls).toHaveLength(1);
  });
});

describe('nested agents', () => {
  it('a tool guardrail trips inside an agent called as a tool: the whole run ends, though asTool turns failures into results', async () => {
    const shell = defineTool({ name: 'shell', description: 'Run a command', parameters: z.object({ cmd: z.string() }), execute: () => 'ran' });
    const sub = agent({ name: 'sub', tools: [shell] });
    const lead = agent({ name: 'lead', tools: [asTool(sub)] });
    const adapter = scriptedAdapter({
      replies: {
        lead: [{ toolCalls: [{ name: 'sub', arguments: { task: 'clean up' } }] }, 'never'],
        sub: [{ toolCalls: [{ name: 'shell', arguments: { cmd: 'rm -rf /' } }] }, 'never'],
      },
    });
    const noRm = defineToolGuardrail({ name: 'no-rm', tools: ['shell'], beforeCall: (call) => ((call.arguments as { cmd: string }).cmd.startsWith('rm') ? { action: 'stop', reason: 'rm' } : { action: 'allow' }) });
    const error = await tripOf(run(withGuardrails(lead, { tools: [noRm] }), 'Tidy the disk', { adapter }));
    expect(error).toMatchObject({ guardrail: 'no-rm', stage: 'tool' });
    expect(error.details).toMatchObject({ agent: 'sub' });
    expect(adapter.calls.map((c) => `${c.agent}#${c.turn}`)).toEqual(['lead#1', 'sub#1']);
    expect(opNames(error.trace)).toEqual(expect.arrayContaining(['subagent:sub:failed', 'agent:sub:failed']));
  });

  it('a guardrail trips in an orchestrate worker: the loop does not treat it as a failed worker, the run ends', async () => {
    const adapter = scriptedAdapter({
      replies: { lead: ['@worker:coder\nWrite it\n@end', 'never'], coder: ['the secret is 42'] },
    });
    const loop = orchestrate({ lead: agent({ name: 'lead' }), workers: [agent({ name: 'coder' })], mode: 'orchestrator' });
    const guarded = withGuardrails(loop, { stream: [blockWord('no-secrets', 'secret')] });
    const error = await tripOf(run(guarded, 'Build', { adapter }));
    expect(error).toMatchObject({ guardrail: 'no-secrets', stage: 'stream' });
    expect(error.details).toMatchObject({ agent: 'coder' });
    expect(adapter.inputsOf('lead')).toHaveLength(1);
  });

  it('guardrails of nested guarded runnables both apply, inner and outer', async () => {
    const adapter = scriptedAdapter({ replies: { a: ['alpha'], b: ['beta contains forbidden'] } });
    const inner = withGuardrails(agent({ name: 'b' }), { output: [blockWord('inner', 'nothing')] });
    const chain = withGuardrails(handoff(agent({ name: 'a' }), inner), { stream: [blockWord('outer', 'forbidden')] });
    const error = await tripOf(run(chain, 'go', { adapter }));
    expect(error).toMatchObject({ guardrail: 'outer', stage: 'stream' });
    expect(error.details).toMatchObject({ agent: 'b', runnable: 'a -> b' });
  });
});

describe('withGuardrails', () => {
  it('rejects bad options with a clear error', () => {
    const helper = agent({ name: 'helper' });
    expect(() => withGuardrails(helper, { input: [{ name: '', check: () => ({ tripped: false }) }] })).toThrow(/guardrail `name` to be a non-empty string/);
    expect(() => withGuardrails(helper, { input: [blockWord('x', 'a'), blockWord('x', 'b')] })).toThrow('Guardrail "x" is listed twice in `input`');
    expect(() => withGuardrails(helper, { tools: [{ name: 't' }] })).toThrow('needs `beforeCall`, `afterCall` or both');
    expect(() => withGuardrails({} as never, {})).toThrow(/Expected a runnable/);
  });

  it('a check that returns no verdict fails closed', async () => {
    const adapter = scriptedAdapter({ fallback: 'never' });
    const odd = defineGuardrail({ name: 'odd', check: () => 'yes' as unknown as GuardrailVerdict });
    const error = await tripOf(run(withGuardrails(agent({ name: 'helper' }), { input: [odd] }), 'hi', { adapter }));
    expect(error.verdict).toMatchObject({ tripped: true, reason: expect.stringContaining('no verdict') });
  });
});
