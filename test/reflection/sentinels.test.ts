import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSentinels, stripSentinels } from '../../src/reflection/sentinels.js';

describe('parseSentinels', () => {
  it('finds a sentinel on a line of its own', () => {
    expect(parseSentinels('Some work done.\n[[REFLECTION_COMPLETE]]\n').reflectionComplete).toBe(true);
  });
  it('allows white space around the sentinel and text after it', () => {
    expect(parseSentinels('Done.\n  [[REFLECTION_COMPLETE]]  \nExtra text').reflectionComplete).toBe(true);
  });
  it('ignores a sentinel in the middle of a sentence', () => {
    expect(parseSentinels('I said [[REFLECTION_COMPLETE]] in the middle of a sentence').reflectionComplete).toBe(false);
  });
  it('ignores prose that only sounds complete', () => {
    expect(parseSentinels('Goal complete - all done')).toEqual({ reflectionComplete: false, groupComplete: false, needsIteration: false });
  });
  it('matches the group sentinels case-insensitively', () => {
    expect(parseSentinels('ok\n[[group_reflect_complete]]').groupComplete).toBe(true);
    expect(parseSentinels('ok\n[[Needs_Iteration]]').needsIteration).toBe(true);
  });
  it('matches [[REFLECTION_COMPLETE]] exactly', () => {
    expect(parseSentinels('ok\n[[reflection_complete]]').reflectionComplete).toBe(false);
  });
  it('accepts \\r\\n line ends', () => {
    expect(parseSentinels('Done.\r\n[[REFLECTION_COMPLETE]]\r\nmore').reflectionComplete).toBe(true);
  });
  it('ignores sentinels inside fenced code blocks', () => {
    const text = 'Example:\n```\n[[REFLECTION_COMPLETE]]\n```\nnot yet';
    expect(parseSentinels(text).reflectionComplete).toBe(false);
    expect(parseSentinels(`${text}\n[[REFLECTION_COMPLETE]]`).reflectionComplete).toBe(true);
  });
});

describe('stripSentinels', () => {
  it('removes counted sentinels and keeps everything else', () => {
    expect(stripSentinels('Result.\n[[GROUP_REFLECT_COMPLETE]]\n')).toBe('Result.');
    expect(stripSentinels('I said [[REFLECTION_COMPLETE]] here')).toBe('I said [[REFLECTION_COMPLETE]] here');
    expect(stripSentinels('```\n[[NEEDS_ITERATION]]\n```')).toBe('```\n[[NEEDS_ITERATION]]\n```');
  });
});

describe('sentinel properties', () => {
  it('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), (text) => {
        const found = parseSentinels(text);
        expect(typeof found.groupComplete).toBe('boolean');
        expect(parseSentinels(stripSentinels(text))).toEqual({ reflectionComplete: false, groupComplete: false, needsIteration: false });
      }),
    );
  });
  it('finds a sentinel appended on its own line after text without fences', () => {
    fc.assert(
      fc.property(fc.string().filter((s) => !s.includes('`') && !s.includes('~')), (text) => {
        expect(parseSentinels(`${text}\n[[REFLECTION_COMPLETE]]`).reflectionComplete).toBe(true);
      }),
    );
  });
});
