import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { charterCell, readHeading, readLabelled, splitRow, stripMarkdown } from '../../src/squad/markdown.js';

// The regular expressions the squad reader used before it read inline markdown in one pass. They are
// the reference: on short text (where their bounded repetitions cannot cost much) both must agree.
const reference = {
  stripMarkdown: (text: string) =>
    text
      .replace(/!?\[([^\]\n]{0,200})\]\([^)\n]{0,300}\)/g, '$1')
      .replace(/<[^<>\n]{0,300}>/g, '')
      .replace(/`+/g, '')
      .replace(/(\*\*|__|~~)([^\n]{0,300}?)\1/g, '$2')
      .replace(/(^|[\s(])[*_](\S(?:[^\n]{0,300}?\S)?)[*_](?=$|[\s.,;:!?)])/g, '$1$2')
      .replace(/\s+/g, ' ')
      .trim(),
  charterCell: (cell: string) => {
    const target = /\[[^\]\n]{0,200}\]\(([^)\n]{0,300})\)/.exec(cell)?.[1];
    if (target === undefined) return reference.stripMarkdown(cell);
    return (target.trim().split(/\s/)[0] ?? '').replace(/^<|>$/g, '');
  },
  splitRow: (line: string) => {
    let body = line.trim();
    if (body.startsWith('|')) body = body.slice(1);
    if (body.endsWith('|') && !body.endsWith('\\|')) body = body.slice(0, -1);
    return body.split(/(?<!\\)\|/).map((cell) => cell.replace(/\\\|/g, '|').trim());
  },
  heading: (line: string) => {
    const h = /^(#{1,6})[ \t]+(.*)$/.exec(line);
    return h ? (h[1] ?? '').length : undefined;
  },
  labelled: (line: string) => {
    const m = /^\s*(?:[-*]\s+)?(?:\*\*|__)?(role|status|charter)(?::(?:\*\*|__)|(?:\*\*|__)?\s*:)\s*(.*)$/i.exec(line);
    return m ? { key: (m[1] ?? '').toLowerCase(), value: m[2] ?? '' } : undefined;
  },
};

const markdownish = fc.string({ unit: fc.constantFrom('*', '_', '~', '`', '[', ']', '(', ')', '!', '<', '>', '|', '\\', ' ', '\t', '\n', 'a', 'b', '.', ':', '#', '-'), maxLength: 40 });

describe('one-pass inline markdown', () => {
  it('strips what the regular expressions stripped', () => {
    fc.assert(fc.property(markdownish, (text) => {
      expect(stripMarkdown(text)).toBe(reference.stripMarkdown(text));
    }), { numRuns: 3000 });
  });
  it('reads charter cells as before', () => {
    fc.assert(fc.property(markdownish, (text) => {
      expect(charterCell(text)).toBe(reference.charterCell(text));
    }), { numRuns: 2000 });
  });
  it('splits table rows as before', () => {
    fc.assert(fc.property(markdownish, (text) => {
      expect(splitRow(text)).toEqual(reference.splitRow(text));
    }), { numRuns: 2000 });
  });
  it('reads headings and labelled lines as before (on one line)', () => {
    const line = markdownish.map((t) => t.replace(/\n/g, ' '));
    const labelledLine = fc.tuple(fc.constantFrom('', ' ', '- ', '* ', '-\t'), fc.constantFrom('', '**', '__'), fc.constantFrom('role', 'Status', 'CHARTER', 'rol'), fc.constantFrom(':', ':**', '**:', ' :', '__ :', ''), line).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(line, labelledLine), (text) => {
        expect(readHeading(text)?.level).toBe(reference.heading(text));
        const read = readLabelled(text, ['role', 'status', 'charter']);
        expect(read === undefined ? undefined : { key: read.key, value: read.value }).toEqual(reference.labelled(text));
      }),
      { numRuns: 3000 },
    );
  });
  it('keeps link text, drops emphasis and tags', () => {
    expect(stripMarkdown('**Ada** [Lovelace](https://x) <b>_lead_</b> `x`')).toBe('Ada Lovelace lead x');
    expect(charterCell('[charter](.squad/agents/ada/charter.md "title")')).toBe('.squad/agents/ada/charter.md');
  });
});
