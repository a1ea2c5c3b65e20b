import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCORE, normaliseScore, parseEvaluation, parseScore, parseVerdict, safeParseScore } from '../../src/reflection/evaluation.js';

describe('parseEvaluation', () => {
  it('reads SCORE and RATIONALE lines', () => {
    expect(parseEvaluation('SCORE: 0.75\nRATIONALE: Good progress but missing edge cases.')).toEqual({
      score: 0.75,
      rationale: 'Good progress but missing edge cases.',
      scoreFound: true,
    });
  });
  it.each([
    ['SCORE: 1', 1],
    ['SCORE: 0', 0],
    ['score: 7/10', 0.7],
    ['Score: 85%', 0.85],
    ['SCORE: 85', 0.85],
    ['SCORE: 100', 1],
    ['SCORE: 1.5', 1],
    ['SCORE: 150', 1],
    ['SCORE: -3', 0],
    ['**SCORE:** 0.9', 0.9],
    ['SCORE = .4', 0.4],
  ])('%s → %s', (text, score) => {
    expect(parseEvaluation(text)).toMatchObject({ score, scoreFound: true });
  });
  it('gives 0.5 and the whole text when there is no score', () => {
    expect(parseEvaluation('  Looks fine to me.  ')).toEqual({ score: 0.5, rationale: 'Looks fine to me.', scoreFound: false });
    expect(parseEvaluation('SCORE: high')).toMatchObject({ score: 0.5, scoreFound: false });
  });
  it('keeps a multi-line rationale and uses the rest of the text when there is no RATIONALE line', () => {
    expect(parseEvaluation('RATIONALE: first\nsecond\nSCORE: 0.2').rationale).toBe('first\nsecond');
    expect(parseEvaluation('Solid work.\nSCORE: 0.8').rationale).toBe('Solid work.');
  });
  it('falls back to the default for a score that is not one number', () => {
    const reply = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reflection', 'evaluation-version-score.md'), 'utf8');
    expect(parseEvaluation(reply)).toEqual({
      score: DEFAULT_SCORE,
      rationale: 'The refresh path is fixed and tested; the docs still describe the old expiry rules.',
      scoreFound: false,
    });
    for (const raw of ['0.9.1', '0..9', '1,5', '0.9e2', '9x', '0.9_1']) expect(normaliseScore(raw), raw).toBeUndefined();
    for (const [raw, score] of [['0.9.', 0.9], ['0.9, close', 0.9], ['7/10.', 0.7], ['0.85 (good)', 0.85], ['1.0/1.0', 1]] as const) expect(normaliseScore(raw), raw).toBe(score);
  });
  it('ends the rationale before a trailing sentinel or [[...]] marker', () => {
    const reply = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reflection', 'evaluation-closing-sentinel.md'), 'utf8');
    expect(parseEvaluation(reply)).toEqual({
      score: 0.95,
      rationale: 'Complete and correct: the fix, the regression tests and the docs agree with each other.',
      scoreFound: true,
    });
    expect(parseEvaluation('SCORE: 0.6\nRATIONALE: Gaps remain.\n[[NEEDS_ITERATION]]\n').rationale).toBe('Gaps remain.');
    expect(parseEvaluation('SCORE: 0.6\nRATIONALE: Gaps remain. [[DONE_FOR_NOW]] [[NEEDS_ITERATION]]').rationale).toBe('Gaps remain.');
    expect(parseEvaluation('SCORE: 0.6\nRATIONALE: Say [[NEEDS_ITERATION]] when gaps remain.').rationale).toBe('Say [[NEEDS_ITERATION]] when gaps remain.');
    expect(parseEvaluation('RATIONALE: No score given. [[NEEDS_ITERATION]]')).toEqual({ score: DEFAULT_SCORE, rationale: 'No score given.', scoreFound: false });
  });
  it('comes in a safe and a throwing form', () => {
    expect(safeParseScore('no score')).toMatchObject({ success: false, issues: [{ code: 'no_score' }] });
    expect(safeParseScore('SCORE: 0.3')).toMatchObject({ success: true, data: { score: 0.3 } });
    expect(() => parseScore('nothing')).toThrow(expect.objectContaining({ code: 'parse_error' }));
  });
  it('never throws and always gives a score in [0, 1]', () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.string().map((s) => `SCORE: ${s}`)), (text) => {
      const { score } = parseEvaluation(text);
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(1);
    }), { numRuns: 500 });
  });
});

describe('parseVerdict', () => {
  it('passes on PASS at the start', () => {
    expect(parseVerdict('PASS\nGreat work!')).toEqual({ pass: true, feedback: 'Great work!' });
    expect(parseVerdict('  pass  ')).toEqual({ pass: true });
  });
  it('fails with the reason after FAIL', () => {
    expect(parseVerdict('FAIL: Missing error handling')).toEqual({ pass: false, feedback: 'Missing error handling' });
    expect(parseVerdict('FAIL - no tests')).toEqual({ pass: false, feedback: 'no tests' });
    expect(parseVerdict('fail\nThe edge cases are missing.')).toEqual({ pass: false, feedback: 'The edge cases are missing.' });
  });
  it('fails an empty reply and anything else', () => {
    expect(parseVerdict('   ')).toEqual({ pass: false, feedback: 'empty evaluator response' });
    expect(parseVerdict('PASSABLE at best')).toEqual({ pass: false, feedback: 'PASSABLE at best' });
    expect(parseVerdict('It is fine')).toEqual({ pass: false, feedback: 'It is fine' });
  });
  it('never throws', () => {
    fc.assert(fc.property(fc.string(), (text) => {
      expect(typeof parseVerdict(text).pass).toBe('boolean');
    }));
  });
});
