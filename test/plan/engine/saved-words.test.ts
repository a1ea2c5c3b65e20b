// Saved plans written before the chunk statuses were renamed (`succeeded`
// is `completed`, `aborted` is `cancelled`, `stoppedBy` is `reason`) still
// load, and read in today's words (docs/conventions.md, "Retired names").
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { checkpointStream } from '../../../src/core/checkpoint.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { resume } from '../../../src/core/resume.js';
import { run } from '../../../src/core/run.js';
import { planRunnable } from '../../../src/plan/engine/execute.js';
import { planOutcomeSchema } from '../../../src/plan/engine/checkpoint.js';
import { chunkStatusSchema, planEntrySchema } from '../../../src/plan/engine/state.js';
import { chunk, planOf } from '../helpers.js';

const fixtures = join(import.meta.dirname, '..', '..', 'fixtures', 'persistence');
const fixture = (name: string) => JSON.parse(readFileSync(join(fixtures, name), 'utf8')) as Record<string, unknown> & { state: { plan: Parameters<typeof planRunnable>[0] } };

describe('saved plans in the words of before', () => {
  it('read chunk statuses `succeeded` and `aborted` (and their capitalised forms) as `completed` and `cancelled`', () => {
    expect(['succeeded', 'Succeeded', 'aborted', 'Aborted', 'WaitingForDependencies', 'completed'].map((s) => chunkStatusSchema.parse(s))).toEqual([
      'completed',
      'completed',
      'cancelled',
      'cancelled',
      'waiting-for-dependencies',
      'completed',
    ]);
    expect(chunkStatusSchema.safeParse('done').success).toBe(false);
    expect(planEntrySchema.parse({ sequenceIndex: 3, status: 'succeeded', attempts: 1, output: 'x' })).toMatchObject({ status: 'completed' });
  });

  it('read a saved outcome with `succeeded`/`aborted` counts and `stoppedBy` in today’s words', () => {
    const saved = fixture('checkpoint-plan-finished.v1.json').outcome as Record<string, unknown>;
    const read = planOutcomeSchema.parse({ ...saved, status: 'budget-exhausted', stoppedBy: 'budget' }) as Record<string, unknown> & { stats: Record<string, unknown> };
    expect(read.reason).toBe('budget');
    expect(read).not.toHaveProperty('stoppedBy');
    expect(read.stats).toMatchObject({ total: 2, completed: 2, cancelled: 0 });
    expect(read.stats).not.toHaveProperty('succeeded');
    expect(read.stats).not.toHaveProperty('aborted');
  });

  it('resume a finished plan from its stored checkpoint: the outcome comes back in today’s words, nothing runs again', async () => {
    const doc = fixture('checkpoint-plan-finished.v1.json');
    const store = memoryStore();
    await store.set('runs/old-finished/checkpoints/plan:two#0', { ...doc, runId: 'old-finished' });
    await store.append('runs/old-finished/events', { type: 'run.started', runId: 'old-finished', time: 0, runnable: 'two', input: 'Two steps' });
    const adapter = scriptedAdapter({ rules: [{ agent: 'Generic', reply: 'again' }] });
    const resumed = await resume(planRunnable(doc.state.plan, { planId: 'two' }), 'old-finished', { store, adapter });
    expect(adapter.calls).toHaveLength(0);
    expect(resumed.results.map((r) => [r.sequenceIndex, r.status])).toEqual([
      [0, 'completed'],
      [1, 'completed'],
    ]);
    expect(resumed.stats).toMatchObject({ total: 2, completed: 2, cancelled: 0 });
  });

  it('resume an interrupted plan whose checkpoint stream holds `succeeded` entries: those chunks are kept', async () => {
    const plan = planOf(chunk(0), chunk(1, [0]), chunk(2, [1]));
    const store = memoryStore();
    const runnable = planRunnable(plan, { planId: 'three', maxParallel: 1 });
    // A run that stopped before anything ran, then entries appended by a worker of an older troupe.
    const adapter0 = scriptedAdapter({ rules: [{ agent: 'Generic', reply: 'first' }] });
    await run(runnable, 'go', { store, runId: 'old-entries', adapter: adapter0, signal: AbortSignal.abort() }).catch(() => undefined);
    const stream = checkpointStream('old-entries', '/plan:three#0');
    await store.append(stream, { sequenceIndex: 0, status: 'succeeded', attempts: 1, output: 'zero' });
    await store.append(stream, { sequenceIndex: 1, status: 'Succeeded', attempts: 1, output: 'one' });
    const adapter = scriptedAdapter({ rules: [{ agent: 'Generic', reply: 'two' }] });
    const resumed = await resume(runnable, 'old-entries', { store, adapter });
    expect(adapter.calls).toHaveLength(1);
    expect(resumed.results.map((r) => [r.status, r.output])).toEqual([
      ['completed', 'zero'],
      ['completed', 'one'],
      ['completed', 'two'],
    ]);
  });
});
