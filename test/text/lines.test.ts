import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectText, normalizeText } from '../../src/text/lines.js';
import { isTroupeError } from '../../src/core/errors.js';

describe('normalizeText', () => {
  it('drops a leading BOM and reads CRLF and CR as LF', () => {
    expect(normalizeText('\uFEFFa\r\nb\rc\n\r\n\rd')).toBe('a\nb\nc\n\n\nd');
    expect(normalizeText('a\uFEFFb')).toBe('a\uFEFFb');
    expect(normalizeText('plain')).toBe('plain');
  });

  it('agrees with a regular expression on any text, lone surrogates included', () => {
    const unit = fc.constantFrom('\r', '\n', 'a', 'é', '\ud800', '\udc00', '😀', '\uFEFF', ' ');
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 80 }), (text) => {
        expect(normalizeText(text)).toBe(text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n'));
      }),
      { numRuns: 2000 },
    );
  });

  it('throws invalid_argument for a non-string', () => {
    expect(() => expectText(3, 'the text')).toThrow('Expected the text to be a string, got 3 (number)');
    let error: unknown;
    try {
      normalizeText(undefined as never);
    } catch (e) {
      error = e;
    }
    expect(isTroupeError(error, 'invalid_argument')).toBe(true);
  });
});
