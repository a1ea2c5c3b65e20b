// The team chat's state, without a browser: a planning session's run log
// read from troupe's events and from its AG-UI mapping, repeats passed
// over, the cap on kept messages, JSON Patch deltas, and the SSE reader.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TroupeEvent } from 'troupe';
import { PlanningSession } from 'troupe/plan';
import { memoryStore, scriptedAdapter } from 'troupe/testing';
import { AguiMapper, answerRequest, pendingRequests, runPlanningSession } from 'troupe/http';
import { readRun } from 'troupe/persistence';
import { ChatModel, runStatusText } from '../../src/ui/model.js';
import { TroupeEventReader, chunkKeyOf } from '../../src/ui/troupe-events.js';
import { AguiEventReader, applyPatch } from '../../src/ui/agui-events.js';
import { SseReader } from '../../src/ui/sse.js';
import { chunk, planOf } from '../plan/helpers.js';

/** A planning session's run log: a question, the plan approved, a worker that streams, calls a tool and is told something, the synthesis. */
async function sessionLog(): Promise<TroupeEvent[]> {
  const adapter = scriptedAdapter({
    replies: {
      planner: ['{"action":"clarify","questions":["Which module?"]}', '{"action":"plan"}', JSON.stringify(planOf(chunk(0, [], { role: 'Implementation', title: 'Fix the cache' })))],
      Implementation: [{ text: 'Looking', toolCalls: [{ name: 'noop', arguments: { a: 1 } }] }, { chunks: ['Fixed ', 'it.'] }],
    },
    rules: [{ agent: 'synthesis', reply: 'All fixed.' }],
  });
  const store = memoryStore();
  const session = new PlanningSession({ adapter, runId: 's1' });
  const done = runPlanningSession(session, 'Fix the leak', { store, pollMs: 2 });
  for (const answer of [{ text: 'the cache' }, { decision: 'approve' }]) {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      const [request] = await pendingRequests('s1', { store });
      if (request) {
        await answerRequest('s1', request.requestId, answer, { store });
        break;
      }
    }
  }
  await done;
  return (await readRun('s1', { store })).events;
}

describe('reading troupe events', () => {
  it('shows who speaks, the worker, the requests, the tool call and the streamed text, once each', async () => {
    const events = await sessionLog();
    const model = new ChatModel();
    const reader = new TroupeEventReader(model);
    events.forEach((e, seq) => reader.apply(seq, e));
    // A reconnect that sends some events again changes nothing.
    const version = model.version;
    events.slice(10).forEach((e, i) => expect(reader.apply(10 + i, e)).toBe(false));
    expect(model.version).toBe(version);

    expect(model.status).toBe('completed');
    expect(model.phase).toBe('completed');
    expect(model.output).toBe('All fixed.');
    const lines = model.messages.map((m) => `${m.source}:${m.kind}:${m.author}:${m.kind === 'tool' ? m.tool!.name : m.text}`);
    expect(lines).toEqual([
      'user:text:You:Fix the leak',
      'lead:request:lead:- Which module?',
      'user:text:You:the cache',
      'system:status:troupe:The lead is planning.',
      'lead:request:lead:Approve the plan, ask for changes, or reject it.',
      'user:text:You:Approved the plan.',
      'system:status:troupe:The team is at work.',
      'worker:text:Implementation · Fix the cache:Looking',
      'worker:tool:Implementation · Fix the cache:noop',
      'worker:text:Implementation · Fix the cache:Fixed it.',
      'system:status:troupe:Plan completed: 1 completed, 0 failed, 0 skipped.',
      'system:status:troupe:The lead is putting the results together.',
      'lead:text:synthesis:All fixed.',
    ]);
    const worker = model.workers.get('plan/0')!;
    expect(worker).toMatchObject({ title: 'Fix the cache', role: 'Implementation', status: 'completed', colour: 0 });
    expect(worker.lastMessageId).toBe(model.messages[9]!.id);
    expect([...model.requests.values()].map((r) => [r.kind, r.status])).toEqual([
      ['question', 'answered'],
      ['plan-approval', 'answered'],
    ]);
    expect(model.requests.get(model.messages[4]!.requestId!)!.plan!.chunks[0]!.title).toBe('Fix the cache');
    expect(model.turns.filter((t) => t.workerKey === 'plan/0').map((t) => t.turn)).toEqual([1, 2]);
    expect(model.turns[0]!.input).toContain('Fix the cache');
  });

  it('keys an op to its chunk from its path', () => {
    expect(chunkKeyOf('/planning-session:planning-session#0/plan:s1#0/chunk-3/agent:Implementation#0')).toBe('s1/3');
    expect(chunkKeyOf('/plan:a#0/chunk-1/plan:b#0/chunk-2/agent:x#0')).toBe('b/2');
    expect(chunkKeyOf('/agent:x#0')).toBeUndefined();
  });

  it('shows an instruction the page sends once, its plan.instruction adding only the acknowledgement, and takes it out when the sending fails', () => {
    const model = new ChatModel();
    const reader = new TroupeEventReader(model);
    const instruction = (seq: number, text: string) => ({ type: 'plan.instruction', runId: 'r', time: seq, planId: 'plan', instruction: text, running: ['0'], acknowledgement: 'Noted.' });
    const injections = () => model.messages.filter((m) => m.source === 'injection').map((m) => m.text);
    // Noted before it is sent; its event comes back while the request is still answering.
    reader.noteInstruction('Use tabs.', 1);
    reader.apply(0, instruction(0, 'Use tabs.'));
    expect(injections()).toEqual(['Use tabs.']);
    expect(model.messages.filter((m) => m.text === 'Noted.')).toHaveLength(1);
    // One sent from elsewhere (another page, the CLI) is shown from its event.
    reader.apply(1, instruction(1, 'Keep the API.'));
    expect(injections()).toEqual(['Use tabs.', 'Keep the API.']);
    // One that could not be sent goes, and the same text sent again later is shown when its event comes.
    const id = reader.noteInstruction('Add tests.', 2);
    reader.dropInstruction(id, 'Add tests.');
    expect(injections()).toEqual(['Use tabs.', 'Keep the API.']);
    expect(model.message(id)).toBeUndefined();
    reader.apply(2, instruction(2, 'Add tests.'));
    expect(injections()).toEqual(['Use tabs.', 'Keep the API.', 'Add tests.']);
  });

  it('keeps at most maxMessages, dropping the oldest', () => {
    const model = new ChatModel({ maxMessages: 100 });
    for (let i = 0; i < 1000; i++) model.add({ source: 'worker', author: 'w', time: i, kind: 'text', text: `m${i}` });
    expect(model.messages.length).toBeLessThanOrEqual(100 + 100 / 16);
    expect(model.messages.at(-1)!.text).toBe('m999');
    expect(model.dropped + model.messages.length).toBe(1000);
    expect(model.message(model.messages[0]!.id)).toBeDefined();
  });
});

describe('runStatusText', () => {
  it('shows a run running, then its status with the reason its meta gives', () => {
    expect(runStatusText({ status: 'completed' })).toBe('running');
    expect(runStatusText({ endedAt: 2, status: 'completed', reason: 'goal-met' })).toBe('completed (goal-met)');
    expect(runStatusText({ endedAt: 2, status: 'budget-exhausted', reason: 'budget' })).toBe('budget-exhausted (budget)');
    expect(runStatusText({ endedAt: 2, status: 'failed' })).toBe('failed');
    expect(runStatusText({ endedAt: 2 })).toBe('ended');
    // Untrusted JSON: a reason that is not a non-empty string is left out.
    expect(runStatusText({ endedAt: 2, status: 'completed', reason: '' })).toBe('completed');
    expect(runStatusText({ endedAt: 2, status: 'completed', reason: 7 as unknown as string })).toBe('completed');
  });
});

describe('reading AG-UI events', () => {
  it('shows the same conversation from troupe AG-UI mapping', async () => {
    const events = await sessionLog();
    const mapper = new AguiMapper('s1', 'r1');
    const model = new ChatModel();
    const reader = new AguiEventReader(model);
    for (const e of mapper.open(0, { messages: [{ role: 'user', content: 'Fix the leak' }] })) reader.apply(e);
    events.forEach((e, seq) => {
      for (const a of mapper.map(seq, e, false).events) reader.apply(a);
    });
    expect(model.status).toBe('completed');
    expect(model.phase).toBe('completed');
    expect(model.workers.get('plan/0')).toMatchObject({ title: 'Fix the cache', status: 'completed' });
    const texts = model.messages.filter((m) => m.kind === 'text').map((m) => m.text);
    expect(texts).toEqual(expect.arrayContaining(['Fix the leak', 'Looking', 'Fixed it.', 'All fixed.']));
    expect(texts.filter((t) => t === 'All fixed.')).toHaveLength(1);
    expect(model.messages.some((m) => m.kind === 'tool' && m.tool?.name === 'noop')).toBe(true);
  });

  it('turns an interrupt into a request to answer', () => {
    const model = new ChatModel();
    const reader = new AguiEventReader(model);
    reader.apply({ type: 'RUN_STARTED', threadId: 't', runId: 'r' });
    reader.apply({ type: 'RUN_FINISHED', threadId: 't', runId: 'r', outcome: { type: 'interrupt', interrupts: [{ id: 'i1', reason: 'approval', message: 'ops asks to call `deploy`', metadata: { agent: 'ops', tool: 'deploy', risk: 'dangerous', arguments: { env: 'prod' } } }] } });
    expect(model.status).toBe('waiting');
    expect(model.requests.get('i1')).toMatchObject({ kind: 'approval', tool: 'deploy', risk: 'dangerous', via: 'agui', status: 'pending' });
  });

  it('applies JSON Patch deltas, refusing prototype keys', () => {
    const state = applyPatch({ troupe: { chunks: [{ id: '0' }] } }, [
      { op: 'add', path: '/troupe/phase', value: 'executing' },
      { op: 'replace', path: '/troupe/chunks/0/id', value: '1' },
      { op: 'add', path: '/troupe/chunks/-', value: { id: '2' } },
      { op: 'remove', path: '/troupe/chunks/0' },
      { op: 'add', path: '/__proto__/polluted', value: true },
    ]);
    expect(state).toEqual({ troupe: { phase: 'executing', chunks: [{ id: '2' }] } });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('SseReader', () => {
  it('reads the same events however the text is cut', () => {
    const text = 'retry: 1000\n\n: keep-alive\n\nid: 0\ndata: {"a":1}\n\nevent: error\r\ndata: x\r\ndata: y\r\n\r\nid: 2\rdata: z\r\r';
    const whole = new SseReader().push(text);
    expect(whole).toEqual([
      { event: 'message', data: '{"a":1}', id: '0' },
      { event: 'error', data: 'x\ny', id: '0' },
      { event: 'message', data: 'z', id: '2' },
    ]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: text.length }), { maxLength: 12 }), (cuts) => {
        const points = [...new Set([0, ...cuts.sort((a, b) => a - b), text.length])];
        const reader = new SseReader();
        const events = points.slice(1).flatMap((end, k) => reader.push(text.slice(points[k], end)));
        expect(events).toEqual(whole);
      }),
    );
  });
});
