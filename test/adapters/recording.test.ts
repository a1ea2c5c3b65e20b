import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRecording, recordingAdapter, replayAdapter, ReplayDivergenceError } from '../../src/adapters/recording.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { adapterSuite } from '../../src/testing/adapter-suite.js';
import { scriptedFor } from '../helpers/scenarios.js';

adapterSuite('replay', async (scenario) => {
  if (scenario.kind === 'hang' || scenario.kind === 'stream-hang') return undefined; // a recording answers at once; nothing to wait for
  const recorder = recordingAdapter(scriptedFor(scenario)!);
  const s = await recorder.openSession({ agent: 'conformance', system: 'Reply pong.' });
  const first = await s.send(scenario.kind === 'text' ? 'ping' : 'What is 2 + 3?');
  if (first.toolCalls.length > 0) {
    await s.send([{ callId: first.toolCalls[0]!.id, name: 'add', content: '5' }]);
  }
  // Sessions are matched by opening order: record enough of them for every test.
  const records = recorder.records;
  const many = [1, 2, 3].flatMap((n) => records.map((r) => ({ ...r, session: n })));
  return replayAdapter(many);
}, { runner: { describe, it } });

describe('record and replay', () => {
  it('records every turn as JSONL and replays a run with zero model calls', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-rec-'));
    const path = join(dir, 'rec.jsonl');
    const inner = scriptedAdapter({ rules: [{ agent: 'a', reply: 'first answer' }] });
    const recorder = recordingAdapter(inner, { path });
    const original = await run(agent({ name: 'a', system: 'sys' }), 'question', { adapter: recorder });
    const text = readFileSync(path, 'utf8');
    expect(parseRecording(text)).toHaveLength(1);
    const replay = replayAdapter(text);
    const again = await run(agent({ name: 'a', system: 'sys' }), 'question', { adapter: replay });
    expect(again.output).toBe(original.output);
    expect(replay.served).toBe(1);
    expect(inner.calls).toHaveLength(1);
  });

  it('replays a recorded failure as an AdapterError, so a model fallback replays too', async () => {
    const inner = scriptedAdapter({ fallback: (req) => (req.spec.model === 'big' ? { fault: 'throw', error: 'big is down' } : `from ${req.spec.model}`) });
    const recorder = recordingAdapter(inner);
    const flaky = () => agent({ name: 'a', models: ['big', 'small'] });
    const original = await run(flaky(), 'q', { adapter: recorder });
    expect(original.output).toBe('from small');
    const replay = replayAdapter(recorder.records);
    const again = await run(flaky(), 'q', { adapter: replay });
    expect(again.output).toBe('from small');
    expect(replay.served).toBe(2);
    expect(inner.calls).toHaveLength(2);
  });

  it('fails with a clear error naming the first divergence', async () => {
    const recorder = recordingAdapter(scriptedAdapter({ fallback: 'x' }));
    await run(agent({ name: 'a' }), 'the original question', { adapter: recorder });
    const replay = replayAdapter(recorder.records);
    const err = await run(agent({ name: 'a' }), 'the changed question', { adapter: replay }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReplayDivergenceError);
    expect((err as Error).message).toMatch(/agent "a", session 1, turn 1: input differs at character 5/);
    await expect(run(agent({ name: 'b' }), 'q', { adapter: replay })).rejects.toThrow(/no session 1 for agent "b"/);
  });

  it('ignores a torn last line', () => {
    const good = JSON.stringify({ v: 1, adapter: 's', agent: 'a', session: 1, turn: 1, spec: { agent: 'a' }, input: 'x', reply: { text: 'y', toolCalls: [] } });
    expect(parseRecording(`${good}\n{"v":1,"ag`)).toHaveLength(1);
    expect(() => parseRecording(`{"v":1,"ag\n${good}\n`)).toThrow(/Line 1 of the recording/);
  });
});
