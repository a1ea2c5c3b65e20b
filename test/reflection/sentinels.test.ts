import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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

const fixture = (name: string) => readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reflection', name), 'utf8');

describe('a sentinel that closes the answer', () => {
  it('counts when it ends the answer\'s last line, after its text', () => {
    const synthesis = fixture('synthesis-closing-sentinel.md');
    expect(parseSentinels(synthesis).groupComplete).toBe(true);
    expect(stripSentinels(synthesis)).toBe(synthesis.replace(' [[GROUP_REFLECT_COMPLETE]]\n', ''));
    expect(parseSentinels('All done. [[GROUP_REFLECT_COMPLETE]]\r\n\r\n  ')).toMatchObject({ groupComplete: true });
    expect(parseSentinels('Needs more. [[needs_iteration]]')).toMatchObject({ needsIteration: true });
    expect(parseSentinels('Finished.\t[[REFLECTION_COMPLETE]]').reflectionComplete).toBe(true);
  });
  it('counts a run of sentinels that ends the answer, across lines', () => {
    expect(parseSentinels('Done. [[NEEDS_ITERATION]]\n[[GROUP_REFLECT_COMPLETE]] [[REFLECTION_COMPLETE]]')).toEqual({
      reflectionComplete: true, groupComplete: true, needsIteration: true,
    });
    expect(stripSentinels('Done. [[NEEDS_ITERATION]]\n\n[[GROUP_REFLECT_COMPLETE]] [[REFLECTION_COMPLETE]]\n')).toBe('Done.');
  });
  it('does not count mid-sentence, quoted, in backticks, in a block quote, glued to a word, or in a fence', () => {
    const explained = fixture('synthesis-quoted-sentinel.md');
    expect(parseSentinels(explained)).toEqual({ reflectionComplete: false, groupComplete: false, needsIteration: false });
    expect(stripSentinels(explained)).toBe(explained.trimEnd());
    for (const text of [
      'I will write [[GROUP_REFLECT_COMPLETE]] when done.',
      'Say "[[GROUP_REFLECT_COMPLETE]]"',
      'The marker is `[[GROUP_REFLECT_COMPLETE]]`',
      '> [[GROUP_REFLECT_COMPLETE]]',
      '> Quoted: done [[GROUP_REFLECT_COMPLETE]]',
      'done[[GROUP_REFLECT_COMPLETE]]',
      'Example:\n```\nAll done. [[GROUP_REFLECT_COMPLETE]]',
      'Example:\n~~~~\nAll done. [[GROUP_REFLECT_COMPLETE]]\n~~~~',
      'All done. [[GROUP_REFLECT_COMPLETE]].',
      'All done. [[GROUP_REFLECT_COMPLETE]]\nNot quite, though.',
    ]) {
      expect(parseSentinels(text).groupComplete, text).toBe(false);
    }
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
  it('strips every sentinel it counts, and stripping twice changes nothing', () => {
    const piece = fc.constantFrom('[[GROUP_REFLECT_COMPLETE]]', '[[needs_iteration]]', '[[REFLECTION_COMPLETE]]', ' ', '\t', '\n', '\r\n', 'x', '.', '>', '"', '```', '~~~', '[[', ']]');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }).map((p) => p.join('')), (text) => {
        const stripped = stripSentinels(text);
        expect(parseSentinels(stripped)).toEqual({ reflectionComplete: false, groupComplete: false, needsIteration: false });
        expect(stripSentinels(stripped)).toBe(stripped);
      }),
      { numRuns: 1000 },
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
