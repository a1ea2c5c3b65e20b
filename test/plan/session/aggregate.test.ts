import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { aggregate } from '../../../src/plan/session/aggregate.js';
import type { ChunkResult } from '../../../src/plan/engine/execute.js';
import { chunk, planOf } from '../helpers.js';

describe('aggregate', () => {
  it('gives the synthesis session every chunk and flags files changed by several workers', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'synthesis', reply: { text: 'All good except the cache.', usage: { inputTokens: 7, outputTokens: 3 } } }] });
    const plan = planOf(chunk(0), chunk(1), chunk(2, [0]));
    const results: ChunkResult[] = [
      { sequenceIndex: 0, title: 'Fix cache', role: 'Implementation', status: 'failed', attempts: 3, error: 'tests fail', files: ['src/a.ts'], durationMs: 5 },
      { sequenceIndex: 1, title: 'Fix session', role: 'Implementation', status: 'completed', attempts: 1, output: 'patched', files: ['src/a.ts', 'src/b.ts'], durationMs: 5 },
      { sequenceIndex: 2, title: 'Verify', role: 'Testing', status: 'skipped', attempts: 0, error: 'Skipped: dependency 0 failed', durationMs: 0 },
    ];
    const report = await aggregate(plan, results, { adapter, task: 'Fix the leaks', durationMs: 42 });
    expect(report.summary).toBe('All good except the cache.');
    expect(report.conflicts).toEqual([{ file: 'src/a.ts', chunks: [0, 1] }]);
    expect(report.stats).toMatchObject({ total: 3, completed: 1, failed: 1, skipped: 1, retried: 1, durationMs: 42, usage: { inputTokens: 7, outputTokens: 3 } });
    const prompt = adapter.inputsOf('synthesis')[0]!;
    expect(prompt).toContain('## Task\n\nFix the leaks');
    expect(prompt).toContain('### 0. Fix cache\nRole: Implementation · Status: failed · Attempts: 3\nFiles: src/a.ts');
    expect(prompt).toContain('Error: tests fail');
    expect(prompt).toContain('Response:\npatched');
    expect(prompt).toContain('- src/a.ts: chunks 0, 1');
  });

  it('writes the summary in a session the caller owns', async () => {
    const sent: string[] = [];
    const session = { send: async (input: string) => (sent.push(input), { text: 'Summary.' }) };
    const plan = planOf(chunk(0));
    const results: ChunkResult[] = [{ sequenceIndex: 0, title: 'Fix cache', role: 'Implementation', status: 'completed', attempts: 1, output: 'patched', durationMs: 1 }];
    const report = await aggregate(plan, results, { session, task: 'Fix the leak' });
    expect(report.summary).toBe('Summary.');
    expect(report.stats).toMatchObject({ total: 1, completed: 1, failed: 0 });
    expect(sent[0]).toContain('Response:\npatched');
  });
});
