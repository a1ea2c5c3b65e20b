import { describe, expect, it } from 'vitest';
import { parseAssignments } from '../../src/reflection/assignments.js';
import { parseEvaluation, parseVerdict } from '../../src/reflection/evaluation.js';
import { parseSentinels, stripSentinels } from '../../src/reflection/sentinels.js';
import { StallDetector } from '../../src/reflection/stall.js';

// 1 MB adversarial inputs complete and give sane answers (timings live in bench/reflection.bench.ts).
const MB = 1024 * 1024;
const inputs = {
  worker: '@worker:'.repeat(MB / 8),
  workerLines: '@worker:a\nx\n'.repeat(MB / 12),
  brackets: '[['.repeat(MB / 2),
  longLine: 'word '.repeat(MB / 5),
};

describe('1 MB adversarial inputs', () => {
  it.each(Object.entries(inputs))('%s', (_name, text) => {
    expect(parseSentinels(text).reflectionComplete).toBe(false);
    expect(stripSentinels(text).length).toBeGreaterThan(0);
    const { assignments } = parseAssignments(text, ['a']);
    expect(assignments.length).toBeLessThanOrEqual(1);
    expect(parseEvaluation(`SCORE: ${text}`).score).toBeGreaterThanOrEqual(0);
    expect(parseVerdict(text).pass).toBe(false);
    expect(new StallDetector().check(text).repeated).toBe(false);
  });
});
