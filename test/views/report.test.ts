import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { advisors, agent, handoff, run, type TroupeEvent } from 'troupe';
import { buildReportData, renderRunReport } from 'troupe/report';
import { criticalPathOf } from '../../src/plan/model/dag.js';
import { SimulatedClock, memoryStore, scriptedAdapter } from 'troupe/testing';
import { readRun } from '../../src/persistence/run-log.js';
import { showcaseAdapter, showcaseFlow } from '../helpers/observe-flow.js';
import { drive } from '../plan/helpers.js';

/** The showcase run's events (a router, a plan with advisors, a retry, a tool call, a scored review loop). */
async function showcase(): Promise<TroupeEvent[]> {
  const clock = new SimulatedClock(1_700_000_000_000);
  const events: TroupeEvent[] = [];
  await drive(clock, run(showcaseFlow(), 'Add a CSV export', { adapter: showcaseAdapter(clock), clock, runId: 'showcase', onEvent: (e) => events.push(e) }));
  return events;
}

describe('buildReportData', () => {
  it('folds the run into ops, chunk attempts, the critical path, usage, scores and lanes', async () => {
    const data = buildReportData(await showcase());
    expect(data.run).toMatchObject({ runId: 'showcase', name: 'desk', status: 'completed', input: 'Add a CSV export', segments: 1 });
    expect(data.run.end! - data.run.start).toBe(195);

    const plan = data.plans[0]!;
    expect(plan.planId).toBe('delivery');
    expect(plan.chunks.map((c) => [c.chunkId, c.dependsOn, c.status, c.attempts.map((a) => a.status)])).toEqual([
      ['1', [], 'completed', ['completed']],
      ['2', ['1'], 'completed', ['completed']],
      ['3', ['1'], 'completed', ['retrying', 'completed']],
      ['4', ['2', '3'], 'completed', ['completed']],
    ]);
    const c3 = plan.chunks[2]!;
    expect(c3.attempts[0]!.error).toBe('The model service is overloaded');
    expect(c3.error).toBeUndefined();
    expect(c3.durationMs).toBe(c3.attempts[1]!.end! - c3.attempts[0]!.start);
    // Chunk 3 (two attempts and the wait between) outlasts chunk 2: the critical path goes through it.
    expect(c3.durationMs).toBeGreaterThan(plan.chunks[1]!.durationMs);
    expect(plan.criticalPath).toEqual(['1', '3', '4']);
    expect(plan.chunks.map((c) => c.critical)).toEqual([true, false, true, true]);
    // Each attempt's op is found through its chunk: two for chunk 3.
    expect(c3.opIds.map((id) => data.ops.find((o) => o.id === id)!.plan?.attempt)).toEqual([1, 2]);

    // Usage per agent and model adds up to the run's usage.
    const sum = data.usage.reduce((n, r) => ({ in: n.in + r.inputTokens, out: n.out + r.outputTokens, cost: n.cost + r.costUsd }), { in: 0, out: 0, cost: 0 });
    expect(sum.in).toBe(data.run.usage.inputTokens);
    expect(sum.out).toBe(data.run.usage.outputTokens);
    expect(sum.cost).toBeCloseTo(data.run.usage.costUsd, 10);
    expect(data.usage.find((r) => r.agent === 'builder')).toMatchObject({ model: 'gpt-test', adapter: 'scripted', turns: 5 });

    expect(data.loops).toEqual([
      expect.objectContaining({
        name: 'docs-review',
        scores: [expect.objectContaining({ iteration: 1, score: 0.55 }), expect.objectContaining({ iteration: 2, score: 0.7 }), expect.objectContaining({ iteration: 3, score: 0.93, goalMet: true })],
        stalls: [{ iteration: 2, stalled: false }],
      }),
    ]);

    // The tool call, with its arguments and result, under the builder of chunk 2.
    expect(data.tools).toEqual([expect.objectContaining({ name: 'read_file', callId: 'call-read', result: 'contents of src/export.ts' })]);
    const toolOp = data.ops.find((o) => o.id === data.tools[0]!.opId)!;
    expect(toolOp).toMatchObject({ kind: 'agent', agent: 'builder', plan: { planId: 'delivery', chunkId: '2', attempt: 1 } });

    // Lanes: patterns, then chunks, then agents; the retry is a failed attempt, a wait, and a marker.
    expect(data.lanes.map((l) => l.group)).toEqual([...data.lanes.map((l) => l.group)].sort((a, b) => ['flow', 'chunks', 'agents'].indexOf(a) - ['flow', 'chunks', 'agents'].indexOf(b)));
    const lane3 = data.lanes.find((l) => l.id.endsWith('|3'))!;
    expect(lane3.bars.map((b) => `${b.kind}:${b.status}`)).toEqual(['attempt:retrying', 'wait:retrying', 'attempt:completed']);
    expect(lane3.markers.map((m) => m.kind)).toEqual(['retry']);
    expect(data.lanes.find((l) => l.label === 'orchestrate docs-review')!.markers.map((m) => m.kind)).toEqual(['stall']);
    // Advisors run in parallel with each other across chunks 2 and 3: their lane needs two rows.
    expect(data.lanes.find((l) => l.label === 'security')!.rows).toBe(2);
    // A failed model turn is drawn as failed on its agent's lane.
    expect(data.lanes.find((l) => l.label === 'builder')!.bars.filter((b) => b.kind === 'turn' && b.status === 'failed')).toHaveLength(1);
  });

  it('reads a run log back from a store, skips records that are not events, and keeps a resumed run apart', async () => {
    const store = memoryStore();
    const adapter = scriptedAdapter({ fallback: 'ok' });
    await run(agent({ name: 'a' }), 'first', { adapter, store, runId: 'r1' });
    const log = await readRun('r1', { store });
    const twice = [...log.events, 'junk', { type: 1 }, ...log.events.map((e) => ({ ...e }))];
    const data = buildReportData(twice);
    expect(data.skipped).toBe(2);
    expect(data.run.segments).toBe(2);
    expect(data.ops.map((o) => o.id)).toEqual(['op-0', 'op-1', 's1/op-0', 's1/op-1']);
    expect(data.ops.find((o) => o.id === 's1/op-1')!.parentId).toBe('s1/op-0');
  });

  it('counts the same turns in the header, the usage rows and the run total, a failed turn included', async () => {
    const events: TroupeEvent[] = [];
    const adapter = scriptedAdapter({ rules: [{ reply: { text: 'Done.', usage: { inputTokens: 5, outputTokens: 2 } } }] });
    await run(handoff(agent({ name: 'writer' }), agent({ name: 'reviewer' })), 'Write', { adapter, onEvent: (e) => events.push(e) });
    const data = buildReportData(events);
    const rows = data.usage.reduce((sum, row) => sum + row.turns, 0);
    expect(data.turns.length).toBeGreaterThan(0);
    expect(rows).toBe(data.turns.length);
    expect(data.run.usage.turns).toBe(data.turns.length);
  });

  it('counts an advisor\'s turn that ended after its agent timed out in the run total too (the run op\'s own usage leaves it out)', async () => {
    const events: TroupeEvent[] = [];
    const adapter = scriptedAdapter({ rules: [{ agent: 'style', reply: { text: 'late', delayMs: 300, usage: { inputTokens: 7, outputTokens: 3 } } }], fallback: 'ok' });
    const flow = advisors(agent({ name: 'front' }), [agent({ name: 'risk' }), agent({ name: 'style', timeoutMs: 50 })]);
    await run(flow, 'Review this', { adapter, onEvent: (e) => events.push(e) });
    const data = buildReportData(events);
    const logged = events.filter((e) => e.type === 'model.turn').length;
    expect(data.turns).toHaveLength(logged);
    expect(data.usage.reduce((sum, row) => sum + row.turns, 0)).toBe(logged);
    // The header and the "Run total" row: the logged turns, as the rows count them.
    expect(data.run.usage.turns).toBe(logged);
  });

  it('cuts long texts and counts them', async () => {
    const adapter = scriptedAdapter({ fallback: 'x'.repeat(500) });
    const events: TroupeEvent[] = [];
    await run(agent({ name: 'a' }), 'y'.repeat(50), { adapter, onEvent: (e) => events.push(e) });
    const data = buildReportData(events, { maxTextLength: 100 });
    expect(data.run.output).toMatch(/^x{100}\n… \(400 more characters\)$/);
    expect(data.run.input).toBe('y'.repeat(50));
    expect(data.truncated).toBeGreaterThan(0);
  });

  it('handles a long log without spreading it into arguments (no stack overflow)', () => {
    const events: unknown[] = [{ type: 'run.started', runId: 'big', time: 0, opId: 'op-0', runnable: 'big', input: 'x' }];
    const usage = { inputTokens: 1, outputTokens: 1, cachedTokens: 0, costUsd: 0, turns: 1 };
    const spec = { agent: 'a', model: 'm' };
    for (let i = 1; i <= 40_000; i++) {
      const opId = `op-${i}`;
      events.push({ type: 'op.started', runId: 'big', time: i, opId, kind: 'agent', name: 'a', agent: 'a', parentId: 'op-0', depth: 1 });
      events.push({ type: 'model.turn', runId: 'big', time: i + 0.5, opId, v: 1, adapter: 's', agent: 'a', session: i, turn: 1, spec, input: 'q', reply: { text: 'r', toolCalls: [], usage } });
      events.push({ type: 'op.completed', runId: 'big', time: i + 0.9, opId, kind: 'agent', name: 'a', agent: 'a', status: 'completed', usage, durationMs: 0.9 });
    }
    events.push({ type: 'run.completed', runId: 'big', time: 50_000, opId: 'op-0', runnable: 'big', status: 'completed', output: 'y', usage, durationMs: 50_000 });
    const data = buildReportData(events);
    expect(data.ops).toHaveLength(40_001);
    expect(data.turns).toHaveLength(40_000);
    expect(data.lanes.find((l) => l.label === 'a')).toMatchObject({ rows: 1 });
    expect(data.usage).toEqual([expect.objectContaining({ agent: 'a', model: 'm', turns: 40_000, inputTokens: 40_000 })]);
    expect(renderRunReport(events).length).toBeGreaterThan(1_000_000);
  });

  it('marks the critical path with the plan model’s one function, by measured durations, not chunk counts', () => {
    const chunks = [
      { id: 'a', dependsOn: [], weight: 10 },
      { id: 'b', dependsOn: ['a'], weight: 5 },
      { id: 'c', dependsOn: ['b'], weight: 5 },
      { id: 'd', dependsOn: ['a'], weight: 30 },
      { id: 'e', dependsOn: ['c', 'd', 'gone'], weight: 1 },
    ];
    expect(criticalPathOf(chunks)).toEqual(['a', 'd', 'e']);
    expect(criticalPathOf([])).toEqual([]);
    // The report imports it and has no path algorithm of its own.
    const source = readFileSync(join(import.meta.dirname, '..', '..', 'src', 'views', 'report', 'data.ts'), 'utf8');
    expect(source).toContain("import { criticalPathOf } from '../../plan/model/dag.js';");
    expect(source).not.toMatch(/indegree|kahn/i);
  });
});

describe('renderRunReport', () => {
  it('writes one self-contained page: data, style and script inline, a policy that loads nothing, well under 1 MB', async () => {
    const events = await showcase();
    const html = renderRunReport({ events });
    expect(Buffer.byteLength(html)).toBeLessThan(1_000_000);
    expect(html).not.toMatch(/\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i);
    expect(html).not.toMatch(/@import|url\(\s*["']?https?:/i);
    // Every inline script and style is allowed by hash, and nothing else is.
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)![1]!;
    expect(csp).toContain("default-src 'none'");
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    const hash = (t: string) => `sha256-${createHash('sha256').update(t).digest('base64')}`;
    expect(csp).toContain(`script-src '${hash(script)}'`);
    expect(csp).toContain(`style-src '${hash(style)}'`);
    // dagre's licence travels with the bundle.
    expect(script).toContain('@dagrejs/dagre');
  });

  it('keeps text from the run from ending the data block or the page', async () => {
    const hostile = '</script><script>alert(1)</script><!-- & "quotes"';
    const adapter = scriptedAdapter({ fallback: hostile });
    const events: TroupeEvent[] = [];
    await run(agent({ name: 'a' }), hostile, { adapter, onEvent: (e) => events.push(e) });
    const html = renderRunReport(events, { title: '<b>title</b>' });
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).toContain('<title>&#60;b&#62;title&#60;/b&#62;</title>');
    const json = /<script type="application\/json" id="troupe-report-data">([\s\S]*?)<\/script>/.exec(html)![1]!;
    expect(JSON.parse(json).run.output).toBe(hostile);
  });

  it('refuses what is not a run log with a typed error', () => {
    expect(() => renderRunReport({} as never)).toThrow(/Expected a run log/);
    expect(() => renderRunReport([], { maxTextLength: 0 })).toThrow(/Expected `maxTextLength` to be a positive integer/);
    // An empty log still renders (a run that logged nothing).
    expect(renderRunReport([])).toContain('<main id="app">');
  });

  it('ships the page script its sources build to', () => {
    const root = join(import.meta.dirname, '..', '..');
    const out = execFileSync(process.execPath, [join(root, 'scripts', 'build-report-page.mjs'), '--check'], { encoding: 'utf8' });
    expect(out).toMatch(/report page script up to date/);
  });
});

describe('budgets in the report', () => {
  it('shows each budget with its limits and spend, the first exhaustion, and compactions', async () => {
    const { withBudget } = await import('troupe/patterns');
    const adapter = scriptedAdapter({
      replies: { writer: [{ text: 'part', toolCalls: [{ name: 'missing', arguments: {} }], usage: { inputTokens: 80, outputTokens: 30, costUsd: 0.01 } }] },
    });
    const events: TroupeEvent[] = [];
    const result = await run(withBudget(agent({ name: 'writer' }), { name: 'cap', totalTokens: 100 }), 'write', { adapter, budget: { name: 'run', costUsd: 1 }, onEvent: (e) => events.push(e) });
    expect(result.status).toBe('budget-exhausted');
    const data = buildReportData(events);
    expect(data.budgets.map((b) => [b.name, b.limits, b.spent.totalTokens, b.exhausted?.limit, b.exhausted?.reason])).toEqual([
      ['run', { costUsd: 1 }, 110, undefined, undefined],
      ['cap', { totalTokens: 100 }, 110, 'totalTokens', 'reached'],
    ]);
    expect(data.budgets[1]!.opId).toBe(data.ops.find((o) => o.kind === 'budget')!.id);
    const html = renderRunReport(events);
    expect(html).toContain('"budgets":[');
  });
});
