// Usage that a CLI reports as its session's total so far (as `codex exec
// resume` does), turned into each turn's, on recordings shaped like Codex's
// output: 42/7 for the first turn, 84/14 after one more turn of 42/7.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexProfile, processAdapter, type ProcessAdapterOptions } from '../../src/adapters/process.js';
import { CumulativeUsage } from '../../src/adapters/process-usage.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { reflect } from '../../src/patterns/reflect.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'cli');
const codex = (extra: Partial<ProcessAdapterOptions> = {}) =>
  processAdapter({ ...codexProfile({ command: [process.execPath, join(fixtures, 'fake-codex.mjs')], args: ['--fixtures', join(fixtures, 'codex')] }), ...extra });

describe('cumulative usage', () => {
  it('codexProfile reports each turn of a resumed thread as its own usage', async () => {
    const session = await codex().openSession({ agent: 'writer' });
    try {
      const first = await session.send('Draft the fix.');
      const second = await session.send('Finish it.');
      expect(first.usage).toEqual({ inputTokens: 42, outputTokens: 7, cachedTokens: 0 });
      expect(second.usage).toEqual({ inputTokens: 42, outputTokens: 7, cachedTokens: 0 });
    } finally {
      await session.close();
    }
  });

  it('a two-turn loop on codexProfile counts 84/14, not 126/21', async () => {
    const loop = reflect(agent({ name: 'writer', adapter: codex() }), { maxIterations: 3 });
    const result = await run(loop, 'Fix the token refresh');
    expect(result).toMatchObject({ status: 'completed', reason: 'goal-met', iterations: 2 });
    expect(result.usage).toMatchObject({ inputTokens: 84, outputTokens: 14, turns: 2 });
  });

  it('per-turn (the default of a custom profile) adds the reports up as they are', async () => {
    const session = await codex({ usageReport: 'per-turn' }).openSession({ agent: 'writer' });
    try {
      await session.send('Draft the fix.');
      expect((await session.send('Finish it.')).usage).toMatchObject({ inputTokens: 84, outputTokens: 14 });
    } finally {
      await session.close();
    }
  });

  it('refuses an unknown usageReport', () => {
    expect(() => codex({ usageReport: 'total' as never })).toThrow(/Expected `usageReport` to be "per-turn" or "cumulative", got "total"/);
  });
});

describe('CumulativeUsage', () => {
  it('subtracts the previous report of the same resumed session', () => {
    const totals = new CumulativeUsage();
    expect(totals.turn({ inputTokens: 42, outputTokens: 7, cachedTokens: 10, costUsd: 0.5 }, { session: 't1', resumed: false })).toEqual({
      inputTokens: 42, outputTokens: 7, cachedTokens: 10, costUsd: 0.5,
    });
    expect(totals.turn({ inputTokens: 84, outputTokens: 14, cachedTokens: 30, costUsd: 0.75 }, { session: 't1', resumed: true })).toEqual({
      inputTokens: 42, outputTokens: 7, cachedTokens: 20, costUsd: 0.25,
    });
  });
  it('counts a report as it is on a new session, a turn that did not resume, or totals that went down', () => {
    const totals = new CumulativeUsage();
    totals.turn({ inputTokens: 42, outputTokens: 7 }, { session: 't1', resumed: false });
    expect(totals.turn({ inputTokens: 50, outputTokens: 9 }, { session: 't2', resumed: true })).toEqual({ inputTokens: 50, outputTokens: 9 });
    expect(totals.turn({ inputTokens: 60, outputTokens: 9 }, { session: 't2', resumed: false })).toEqual({ inputTokens: 60, outputTokens: 9 });
    expect(totals.turn({ inputTokens: 30, outputTokens: 12 }, { session: 't2', resumed: true })).toEqual({ inputTokens: 30, outputTokens: 12 });
    expect(totals.turn({ inputTokens: 70, outputTokens: 20 }, { session: 't2', resumed: true })).toEqual({ inputTokens: 40, outputTokens: 8 });
    expect(totals.turn(undefined, { session: 't2', resumed: true })).toBeUndefined();
    expect(totals.turn({ inputTokens: 75, outputTokens: 21 }, { session: 't2', resumed: true })).toEqual({ inputTokens: 5, outputTokens: 1 });
  });
});
