import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StallDetector, jaccard } from '../../src/reflection/stall.js';

describe('StallDetector', () => {
  it('warns on the first repeat and stalls on the second', () => {
    const stall = new StallDetector();
    expect(stall.check('the same text')).toMatchObject({ repeated: false, consecutive: 0, warn: false, stalled: false });
    expect(stall.check('the same text')).toMatchObject({ consecutive: 1, warn: true, stalled: false });
    expect(stall.check('the same text')).toMatchObject({ consecutive: 2, stalled: true });
  });
  it('counts a response more similar than the threshold as a repeat, and resets on a new one', () => {
    const stall = new StallDetector({ threshold: 0.5 });
    stall.check('a b c d');
    expect(stall.check('a b c e')).toMatchObject({ repeated: true, consecutive: 1, warn: true }); // 3/5 = 0.6 > 0.5
    expect(stall.check('x y z')).toMatchObject({ repeated: false, consecutive: 0, warn: false });
  });
  it('uses a strict threshold', () => {
    const stall = new StallDetector({ threshold: 0.6 });
    stall.check('a b c d');
    const check = stall.check('a b c e');
    expect(check.similarity).toBeCloseTo(0.6);
    expect(check.repeated).toBe(false);
  });
  it('finds exact repeats within the window', () => {
    const stall = new StallDetector({ window: 2 });
    stall.check('one alpha');
    stall.check('two beta');
    expect(stall.check('one alpha').repeated).toBe(true);
    const far = new StallDetector({ window: 1 });
    far.check('one alpha');
    far.check('two beta');
    expect(far.check('one alpha').repeated).toBe(false);
  });
  it('treats blank responses as repeats', () => {
    const stall = new StallDetector();
    expect(stall.check('   \n').repeated).toBe(true);
  });
  it('resets', () => {
    const stall = new StallDetector();
    stall.check('x');
    stall.check('x');
    stall.reset();
    expect(stall.check('x')).toMatchObject({ repeated: false, consecutive: 0 });
  });
  it('validates its options', () => {
    expect(() => new StallDetector({ threshold: 2 })).toThrow('Expected `threshold` to be a number in [0, 1], got 2 (number)');
    expect(() => new StallDetector({ tolerance: 0 })).toThrow(/tolerance/);
  });
  it('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 8 }), (texts) => {
        const stall = new StallDetector();
        for (const t of texts) {
          const c = stall.check(t);
          expect(c.similarity).toBeGreaterThanOrEqual(0);
          expect(c.similarity).toBeLessThanOrEqual(1);
        }
      }),
    );
  });
});

describe('jaccard', () => {
  it('compares token sets, case-sensitively', () => {
    expect(jaccard('a b', 'b a a')).toBe(1);
    expect(jaccard('a b', 'A B')).toBe(0);
    expect(jaccard('a b c', 'a b d')).toBe(0.5);
  });
  it('is symmetric and within [0, 1]', () => {
    fc.assert(fc.property(fc.string(), fc.string(), (a, b) => {
      expect(jaccard(a, b)).toBe(jaccard(b, a));
      expect(jaccard(a, b)).toBeGreaterThanOrEqual(0);
      expect(jaccard(a, b)).toBeLessThanOrEqual(1);
    }));
  });
});
