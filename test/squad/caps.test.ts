import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CONTEXT_CAP, capAtLine, capEntries, headingDate, splitEntries } from '../../src/squad/caps.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'squad');
const eShopDecisions = readFileSync(join(fixtures, 'Azure-Samples__eShopLite', '.squad', 'decisions.md'), 'utf8');

describe('capAtLine', () => {
  it('keeps short text and cuts long text at a line boundary', () => {
    expect(capAtLine('abc', 10)).toBe('abc');
    expect(capAtLine('aaaa\nbbbb\ncccc', 12)).toBe('aaaa\nbbbb');
    expect(capAtLine('aaaa\nbbbb\ncccc', 9)).toBe('aaaa\nbbbb');
    expect(capAtLine('x'.repeat(20), 5)).toBe('xxxxx');
  });

  it('never exceeds the cap and always returns a prefix', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 50 }), (text, max) => {
        const out = capAtLine(text, max);
        expect(out.length).toBeLessThanOrEqual(max);
        expect(text.startsWith(out)).toBe(true);
      }),
    );
  });
});

describe('capEntries', () => {
  it('splits entries at ## and ### headings outside fences', () => {
    const { head, entries } = splitEntries('# Log\nintro\n## A\na\n```\n## not\n```\n### B\nb\n#### sub\n');
    expect(head).toBe('# Log\nintro');
    expect(entries.map((e) => e.split('\n')[0])).toEqual(['## A', '### B']);
  });

  it('keeps the text whole when it fits', () => {
    expect(capEntries('# Log\n## A\na', 100)).toEqual({ text: '# Log\n## A\na', cut: false, omitted: 0 });
  });

  it('keeps the most recent whole entries of the 86 KB eShopLite decisions.md', () => {
    expect(eShopDecisions.length).toBeGreaterThan(80_000);
    const { text, cut, omitted } = capEntries(eShopDecisions.trim(), CONTEXT_CAP);
    expect(cut).toBe(true);
    expect(text.length).toBeLessThanOrEqual(CONTEXT_CAP);
    expect(text.length).toBeGreaterThan(CONTEXT_CAP / 2);
    expect(omitted).toBeGreaterThan(10);
    expect(text).toMatch(/^\(\d+ earlier entries omitted\)\n\n#{2,3} /);
    // What follows the note is the end of the file, starting at an entry heading.
    const body = text.slice(text.indexOf('\n\n') + 2);
    expect(eShopDecisions.trimEnd().endsWith(body)).toBe(true);
    const { entries } = splitEntries(eShopDecisions.trim());
    expect(entries.slice(-3).every((e) => body.includes(e.trimEnd()))).toBe(true);
  });

  it('cuts a single oversized newest entry to its heading and its last lines', () => {
    const big = `## Old\nold\n## New\n${Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n')}`;
    const { text, omitted } = capEntries(big, 200);
    expect(text.length).toBeLessThanOrEqual(200);
    expect(omitted).toBe(1);
    expect(text).toMatch(/^\(1 earlier entry omitted\)\n\n## New\n\(…\)\nline \d+\n/);
    expect(text.endsWith('line 99')).toBe(true);
  });

  it('keeps the last lines of a text without headings', () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const { text } = capEntries(lines, 100);
    expect(text.length).toBeLessThanOrEqual(100);
    expect(text.endsWith('line 99')).toBe(true);
  });

  it('never exceeds the cap and keeps a suffix of the text (property)', () => {
    const line = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('## A', '### B', '---', '```', '# T', ''));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 60 }), fc.integer({ min: 40, max: 400 }), (lines, max) => {
        const text = lines.join('\n');
        const out = capEntries(text, max);
        expect(out.text.length).toBeLessThanOrEqual(max);
        if (!out.cut) expect(out.text).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('splits a log of 200,000 ruled entries (no argument list of every entry)', () => {
    const log = '---\n## entry\nbody\n'.repeat(200_000);
    const { head, entries } = splitEntries(log);
    expect(head).toBe('---');
    expect(entries).toHaveLength(200_000);
    expect(entries[0]).toBe('## entry\nbody\n---');
    expect(capEntries(log, CONTEXT_CAP).omitted).toBeGreaterThan(199_000);
  });
});


describe('dated decisions', () => {
  /** A paragraph of about `n` characters. */
  const prose = (seed: string, n: number) => `${seed}: ${'we weighed the options and wrote down why. '.repeat(Math.ceil(n / 44))}`.slice(0, n);
  /** A `.ai-team/decisions.md` shaped like a real one: ruled entries, then an appendix after the last rule whose dated entries have no rules between them. */
  const log = [
    '# Decisions',
    '',
    ...[1, 2, 3, 4, 5].flatMap((i) => [`### 2026-02-0${i}: Ruled decision ${i}`, '', '**By:** Ripley', '', '## Why', prose(`why ${i}`, 600), '', '---', '']),
    '## Appendix: decisions merged from the inbox',
    '',
    ...[11, 12, 13, 14, 15, 16, 17, 18].flatMap((d) => [`### 2026-03-${d}: Appendix decision ${d}`, '', prose(`what ${d}`, 1400), '']),
  ].join('\n');

  it('splits at dated headings after the last rule as well as at rules', () => {
    const { entries } = splitEntries(log);
    expect(entries.map((e) => e.split('\n')[0])).toEqual([
      ...[1, 2, 3, 4, 5].map((i) => `### 2026-02-0${i}: Ruled decision ${i}`),
      '## Appendix: decisions merged from the inbox',
      ...[11, 12, 13, 14, 15, 16, 17, 18].map((d) => `### 2026-03-${d}: Appendix decision ${d}`),
    ]);
    // An entry keeps its own undated sub-headings.
    expect(entries[0]).toContain('## Why');
  });

  it('keeps the newest entries under the cap, the last one in the file among them', () => {
    expect(log.length).toBeGreaterThan(CONTEXT_CAP + 4000);
    const { text, omitted } = capEntries(log, CONTEXT_CAP);
    expect(text.length).toBeLessThanOrEqual(CONTEXT_CAP);
    expect(text).toMatch(/^\(\d+ earlier entries omitted\)\n\n### 2026-03-/);
    for (const d of [15, 16, 17, 18]) expect(text).toContain(`### 2026-03-${d}: Appendix decision ${d}`);
    expect(text.trimEnd().endsWith(prose('what 18', 1400).trimEnd())).toBe(true);
    expect(text).not.toContain('Ruled decision');
    expect(omitted).toBe(14 - (text.match(/^### 2026-03-/gm) ?? []).length);
  });

  it('keeps the newest by date when a log puts new entries first', () => {
    const newestFirst = ['# Decisions', ...[9, 8, 7, 6, 5, 4, 3, 2, 1].map((d) => `## 2026-04-0${d}: Decision ${d}\n${prose(`d${d}`, 300)}`)].join('\n');
    const { text } = capEntries(newestFirst, 1100);
    expect(text.match(/^## 2026-04-0\d/gm)).toEqual(['## 2026-04-09', '## 2026-04-08', '## 2026-04-07']);
  });

  it('reads the date a heading starts with, and nothing else', () => {
    expect(headingDate('### 2026-03-14: Use zod')).toBe('2026-03-14');
    expect(headingDate('## [2026-03-14] Use zod')).toBe('2026-03-14');
    expect(headingDate('### 2026-06-06T11:28:43.860-04:00: User directive')).toBe('2026-06-06T11:28:43');
    expect(headingDate('### Use zod (2026-03-14)')).toBeUndefined();
    expect(headingDate('# 2026-03-14')).toBeUndefined();
    expect(headingDate('### 2026-3-14')).toBeUndefined();
    expect(headingDate('### 20261-03-14')).toBeUndefined();
  });
});
