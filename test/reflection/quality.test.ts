import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QualityTracker, qualityTrend } from '../../src/reflection/quality.js';

describe('QualityTracker', () => {
  it('calls the first score stable, then compares with the previous one', () => {
    const q = new QualityTracker();
    expect(q.record({ score: 0.5, rationale: 'start', evaluator: 'judge' })).toBe('stable');
    expect(q.record({ score: 0.7 })).toBe('improving');
    expect(q.record({ score: 0.75 })).toBe('stable');
    expect(q.record({ score: 0.3 })).toBe('degrading');
    expect(q.history.map((h) => h.trend)).toEqual(['stable', 'improving', 'stable', 'degrading']);
    expect(q.history[0]).toEqual({ score: 0.5, rationale: 'start', evaluator: 'judge', trend: 'stable' });
  });
  it('treats a change of exactly 0.1 as stable, whatever floating point says', () => {
    expect(qualityTrend(0.7, 0.8)).toBe('stable'); // 0.8 - 0.7 = 0.10000000000000009
    expect(qualityTrend(0.8, 0.7)).toBe('stable');
    expect(qualityTrend(0.2, 0.3)).toBe('stable');
    expect(qualityTrend(0.3, 0.2)).toBe('stable');
    expect(qualityTrend(0.2, 0.31)).toBe('improving');
  });
  it('rejects a score that is not a number', () => {
    expect(() => new QualityTracker().record({ score: Number.NaN })).toThrow(/finite number/);
  });
  it('is antisymmetric', () => {
    fc.assert(fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (a, b) => {
      const up = qualityTrend(a, b);
      const down = qualityTrend(b, a);
      expect(up === 'stable' ? down === 'stable' : up !== down).toBe(true);
    }));
  });
});
