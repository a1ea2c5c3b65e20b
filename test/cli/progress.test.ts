import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run, type TroupeEvent } from 'troupe';
import { SimulatedClock } from 'troupe/testing';
import { main } from '../../src/cli/main.js';
import { liveProgress, plainProgress } from '../../src/cli/progress.js';
import { showcaseAdapter, showcaseFlow } from '../helpers/observe-flow.js';
import { drive } from '../plan/helpers.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures');
const desk = join(fixtures, 'cli', 'desk');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'troupe-cli-'));
  dirs.push(d);
  return d;
}

/** Run the CLI in-process with a simulated clock; both streams as lines. */
async function troupe(args: string[], extra: Partial<Parameters<typeof main>[1]> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t), env: {}, clock: new SimulatedClock(), ...extra });
  return { code, out, err };
}

const ANSI = new RegExp(String.raw`\u001B\[[0-9;?]*[A-Za-z]`, 'g');

describe('troupe run progress', () => {
  it('off a terminal: one plain line per event, to standard error', async () => {
    const { code, out, err } = await troupe(['run', desk, 'desk', 'Can I cancel?', '--script', join(fixtures, 'cli', 'desk-script.json')]);
    expect(code).toBe(0);
    expect(out[0]).toBe('Clause 4 lets you cancel.');
    expect(err.join('\n')).toMatchInlineSnapshot(`
      "troupe: adapter scripted (the default, replies from --script)
      [0.000] run desk
      [0.000] ▸ router desk
      [0.000]   ▸ agent risk
      [0.000]   ✓ agent risk completed 0ms · in=6 out=7 turns=1
      [0.000]   ▸ agent desk
      [0.000]       route → legal (a contract)
      [0.000]   ✓ agent desk completed 0ms · in=67 out=8 turns=1
      [0.000]   ▸ agent legal
      [0.000]   ✓ agent legal completed 0ms · in=6 out=7 turns=1
      [0.000] ✓ router desk completed 0ms · in=79 out=22 turns=3
      [0.000] run desk completed in 0.000s · in=79 out=22 turns=3"
    `);
  });

  it('a plan with retries, a tool call and a scored loop, on a simulated clock', async () => {
    const clock = new SimulatedClock();
    const lines: string[] = [];
    const progress = plainProgress((line) => lines.push(line));
    await drive(clock, run(showcaseFlow(), 'Add a CSV export', { adapter: showcaseAdapter(clock), clock, onEvent: progress.onEvent }));
    progress.close();
    await expect(`${lines.join('\n')}\n`).toMatchFileSnapshot('__snapshots__/progress-showcase.txt');
  });

  it('--json: every event as one JSON line on standard output, and nothing else', async () => {
    const { code, out, err } = await troupe(['run', desk, 'desk', 'Can I cancel?', '--script', join(fixtures, 'cli', 'desk-script.json'), '--json']);
    expect(code).toBe(0);
    // Standard error says only which adapter answers.
    expect(err).toEqual(['troupe: adapter scripted (the default, replies from --script)']);
    const events = out.map((line) => JSON.parse(line) as TroupeEvent);
    expect(events[0]).toMatchObject({ type: 'run.started', runnable: 'desk', input: 'Can I cancel?' });
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', status: 'completed', output: 'Clause 4 lets you cancel.' });
    expect(events.filter((e) => e.type === 'model.turn')).toHaveLength(3);
  });

  it('on a terminal: a live view redrawn in place with log-update, its timer stopped at the end', async () => {
    const clock = new SimulatedClock();
    let written = '';
    const stream = { isTTY: true, columns: 100, rows: 30, write: (text: string) => ((written += text), true) };
    const progress = await liveProgress(stream, clock, 50);
    const snapshots: string[] = [];
    await drive(
      clock,
      run(showcaseFlow(), 'Add a CSV export', {
        adapter: showcaseAdapter(clock),
        clock,
        onEvent: (e) => {
          progress.onEvent(e);
          if (e.type === 'chunk.status' && e.chunkId === '3' && e.status === 'running' && e.attempt === 2) snapshots.push(written);
        },
      }),
    );
    progress.close();
    expect(clock.pending).toBe(0);
    // Mid-run: totals, the plan's progress and the ops in flight.
    const mid = snapshots[0]!.replace(ANSI, '');
    expect(mid).toMatch(/● desk · 0\.\d{3}s · \d+ in · \d+ out · \$0\.\d{4} · \d+ ops done/);
    expect(mid).toContain('plan delivery: 1/4 chunks done · running #2 #3');
    expect(mid).toContain('… advisors chunk 2 + advisors [#2]');
    // Finished ops and chunk results stay in the scrollback; the last frame shows the plan done.
    const all = written.replace(ANSI, '');
    expect(all).toContain('✗ agent builder [#3] failed 10ms: The model service is overloaded');
    expect(all).toContain('chunk #3 Test the export: retrying (attempt 1)');
    expect(all).toContain('docs-review: score 0.93 (improving), goal met');
    expect(all.trimEnd().split('\n').slice(-2).join('\n')).toMatch(/● desk · 0\.195s · 1920 in · 483 out · \$0\.0200 · 23 ops done\n {2}plan delivery: 4\/4 chunks done$/);
    // Redrawn in place: log-update erases the previous frame's lines.
    expect(written).toContain('\u001B[2K');
  });
});

describe('troupe report', () => {
  it('writes the report of a run logged with --store, by run id and from its events file', async () => {
    const store = tempDir();
    const ran = await troupe(['run', desk, 'desk', 'Can I cancel?', '--script', join(fixtures, 'cli', 'desk-script.json'), '--store', store, '--quiet']);
    expect(ran.code).toBe(0);
    const runId = /^run: (\S+) \(logged in/m.exec(ran.out.join('\n'))![1]!;
    const out = join(tempDir(), 'report.html');
    const byId = await troupe(['report', runId, '--store', store, '--out', out]);
    expect(byId.code).toBe(0);
    expect(byId.out[0]).toMatch(new RegExp(`^wrote ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ KB, \\d+ events\\)$`));
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('<script type="application/json" id="troupe-report-data">');
    expect(html).toContain(`"runId":"${runId}"`);

    const fromFile = join(tempDir(), 'from-file.html');
    const byFile = await troupe(['report', join(store, 'runs', runId, 'events.jsonl'), '--out', fromFile]);
    expect(byFile.code).toBe(0);
    expect(readFileSync(fromFile, 'utf8')).toContain(`"runId":"${runId}"`);
  });

  it('says what is wrong with a bad source', async () => {
    const noStore = await troupe(['report', 'some-run']);
    expect(noStore.code).toBe(2);
    expect(noStore.err[0]).toContain('give --store <dir> (or set TROUPE_STORE)');
    const unknown = await troupe(['report', 'nope', '--store', tempDir()]);
    expect(unknown.code).toBe(1);
    expect(unknown.err[0]).toContain('No run "nope" is logged in');
    const junk = join(tempDir(), 'junk.jsonl');
    writeFileSync(junk, 'not json\n{"a":1}\n');
    const bad = await troupe(['report', junk]);
    expect(bad.code).toBe(1);
    expect(bad.err[0]).toContain('parse_error: ');
    expect(bad.err[0]).toContain(`Line 1 of ${junk} is not valid JSON`);
    const noEvents = join(tempDir(), 'no-events.jsonl');
    writeFileSync(noEvents, '{"a":1}\n');
    const empty = await troupe(['report', noEvents]);
    expect(empty.code).toBe(1);
    expect(empty.err[0]).toContain('holds no run events');
  });
});

describe('troupe graph <plan.json>', () => {
  it('draws a plan file in Mermaid and DOT', async () => {
    const plan = join(fixtures, 'cli', 'plan.json');
    const mermaid = await troupe(['graph', plan]);
    expect(mermaid.code).toBe(0);
    expect(mermaid.out.join('\n')).toMatchInlineSnapshot(`
      "flowchart LR
        c1["#1 Design the export<br/><small>Planning · Low</small>"]
        c2["#2 Build the #quot;export#quot;<br/><small>Implementation · High</small>"]
        c3["#3 Test the export<br/><small>Testing · Medium</small>"]
        c4["#4 Document the export<br/><small>Generic · Low</small>"]
        c1 --> c2
        c1 --> c3
        c2 --> c4
        c3 --> c4"
    `);
    const dot = await troupe(['graph', plan, '--format', 'dot']);
    expect(dot.out.join('\n')).toMatchInlineSnapshot(`
      "digraph plan {
        rankdir=LR;
        node [shape=box];
        "1" [label="#1 Design the export\\nPlanning · Low"];
        "2" [label="#2 Build the \\"export\\"\\nImplementation · High"];
        "3" [label="#3 Test the export\\nTesting · Medium"];
        "4" [label="#4 Document the export\\nGeneric · Low"];
        "1" -> "2";
        "1" -> "3";
        "2" -> "4";
        "3" -> "4";
      }"
    `);
  });

  it('refuses a plan with a cycle, naming it', async () => {
    const file = join(tempDir(), 'cycle.json');
    writeFileSync(file, JSON.stringify({ planSummary: 's', chunks: [1, 2].map((i) => ({ sequenceIndex: i, title: `t${i}`, prompt: 'Do the work of this chunk.', dependsOnIndexes: [3 - i], complexity: 'Low', role: 'Generic' })) }));
    const { code, err } = await troupe(['graph', file]);
    expect(code).toBe(1);
    expect(err[0]).toMatch(/invalid_graph: .* is not a valid plan: dependency cycle: /);
  });
});
