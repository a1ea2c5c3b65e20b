import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NameMatcher, nameKey, sameName } from '../../src/text/names.js';

describe('nameKey', () => {
  it('drops decoration, wrappers and extra white space, and reads any case', () => {
    expect(nameKey('🏗️  Code   Reviewer')).toBe('code reviewer');
    expect(nameKey('**`CODE REVIEWER`**')).toBe('code reviewer');
    expect(nameKey('👩🏽‍💻 Ada')).toBe('ada');
    expect(nameKey('李明 🚀')).toBe('李明');
    expect(nameKey('Zoe\u0308')).toBe(nameKey('Zoë')); // NFD and NFC are one name
  });
  it('keeps what is part of a name', () => {
    expect(nameKey("O'Brien")).toBe("o'brien");
    expect(nameKey('session-a.v2_b')).toBe('session-a.v2_b');
    expect(sameName('Code Reviewer', 'CodeReviewer')).toBe(false);
    expect(sameName('Code Reviewer', 'code  reviewer')).toBe(true);
  });
  it('throws invalid_argument for a value that is not a string', () => {
    expect(() => nameKey(undefined as never)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});

describe('NameMatcher', () => {
  const names = new NameMatcher(['Code', 'Code Reviewer', 'Test Writer', '🧪 Test Writer', 42 as never, '  ']);
  it('finds a whole name by its key; the first of two with one key wins', () => {
    expect(names.find('code reviewer')).toBe('Code Reviewer');
    expect(names.find('test  WRITER')).toBe('Test Writer');
    expect(names.find('Reviewer')).toBeUndefined();
  });
  it('matches the longest known name at a position, ending at the end of a word', () => {
    expect(names.matchAt('Code Reviewer check the diff', 0)).toEqual({ name: 'Code Reviewer', end: 13 });
    expect(names.matchAt('Code Review the diff', 0)).toEqual({ name: 'Code', end: 4 });
    expect(names.matchAt('  code   reviewer', 0)).toEqual({ name: 'Code Reviewer', end: 17 });
    expect(names.matchAt('🧪 Test Writer: go', 0)).toBeUndefined(); // `Writer:` is not the word `Writer`
    expect(names.matchAt('🧪 Test Writer go', 0)).toEqual({ name: 'Test Writer', end: 14 });
    expect(names.matchAt('Codes', 0)).toBeUndefined();
  });
  it('stops at `to`', () => {
    expect(names.matchAt('Code\nReviewer', 0, 4)).toEqual({ name: 'Code', end: 4 });
  });
  it('finds every listed name written in any case with any spacing', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9-]{0,6}$/), { minLength: 1, maxLength: 4 }), fc.constantFrom(' ', '  ', '\t'), (words, gap) => {
        const name = words.join(' ');
        const matcher = new NameMatcher([name]);
        expect(matcher.matchAt(`${words.map((w) => w.toUpperCase()).join(gap)} and more`, 0)?.name).toBe(name);
      }),
    );
  });
});
