// The team chat's Markdown reader: what it reads, that it never throws,
// and that it stays linear on the inputs that make common parsers
// quadratic (or overflow their stack).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_MARKDOWN_DEPTH, parseInline, parseMarkdown, plainText, type MarkdownBlock, type MarkdownInline } from '../../src/ui/markdown.js';

const text = (t: string) => ({ type: 'text', text: t });

describe('parseMarkdown', () => {
  it('reads the blocks of chat answers', () => {
    const blocks = parseMarkdown('# Plan\n\nSteps:\n- read\n- fix\n  1. test\n\n> note\n> more\n\n```ts\nconst a = 1;\n```\n\n| a | b |\n|:-|-:|\n| 1 | 2 |\n\n---\nend');
    expect(blocks.map((b) => b.type)).toEqual(['heading', 'paragraph', 'list', 'quote', 'code', 'table', 'rule', 'paragraph']);
    const list = blocks[2] as Extract<MarkdownBlock, { type: 'list' }>;
    expect(list.items).toHaveLength(2);
    expect(list.items[1]![1]).toMatchObject({ type: 'list', ordered: true, start: 1 });
    expect(blocks[4]).toEqual({ type: 'code', lang: 'ts', text: 'const a = 1;' });
    expect(blocks[5]).toMatchObject({ type: 'table', align: ['left', 'right'], rows: [[[text('1')], [text('2')]]] });
  });

  it('reads inline marks, links and URLs; raw HTML stays text', () => {
    expect(parseInline('**a** *b* ~~c~~ `d` [e](https://x.dev "t") <https://y.dev> https://z.dev/p.')).toEqual([
      { type: 'strong', children: [text('a')] },
      text(' '),
      { type: 'em', children: [text('b')] },
      text(' '),
      { type: 'del', children: [text('c')] },
      text(' '),
      { type: 'code', text: 'd' },
      text(' '),
      { type: 'link', href: 'https://x.dev', children: [text('e')] },
      text(' '),
      { type: 'link', href: 'https://y.dev', children: [text('https://y.dev')] },
      text(' '),
      { type: 'link', href: 'https://z.dev/p', children: [text('https://z.dev/p')] },
      text('.'),
    ]);
    expect(parseInline('<script>alert(1)</script> <img src=x onerror=alert(1)>')).toEqual([text('<script>alert(1)</script> <img src=x onerror=alert(1)>')]);
    expect(parseInline('snake_case_name and 2*3*4')).toEqual([text('snake_case_name and 2'), { type: 'em', children: [text('3')] }, text('4')]);
    expect(parseInline('![chart](https://x/c.png)')).toEqual([{ type: 'image', src: 'https://x/c.png', alt: 'chart' }]);
    expect(parseInline('a\\*b\\* `` a ` b ``')).toEqual([text('a*b* '), { type: 'code', text: 'a ` b' }]);
  });

  it('reads any text without throwing, and keeps every word of it', () => {
    const unit = fc.constantFrom('*', '_', '~', '`', '[', ']', '(', ')', '!', '<', '>', '#', '-', '|', ':', '\n', ' ', '  ', '\t', '\\', 'a', 'b', '1.', 'http://x', '"', '```');
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 80 }).map((u) => u.join('')), (t) => {
        const blocks = parseMarkdown(t);
        // A fence's info string after its first word is dropped; everything else is kept.
        if (t.includes('```')) return;
        const seen = JSON.stringify(blocks);
        for (const w of t.split(/[^ab]+/).filter(Boolean)) expect(seen.includes(w), `${JSON.stringify(t)} keeps ${w}`).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it(`caps nesting at ${MAX_MARKDOWN_DEPTH} levels and reads deep emphasis without recursion`, () => {
    const quotes = parseMarkdown(`${'> '.repeat(50_000)}deep`);
    let depth = 0;
    for (let b: MarkdownBlock | undefined = quotes[0]; b?.type === 'quote'; b = b.children[0]) depth++;
    expect(depth).toBe(MAX_MARKDOWN_DEPTH);
    const nested = parseInline(`${'*a '.repeat(20_000)}x${'b* '.repeat(20_000)}`);
    let levels = 0;
    for (let n: MarkdownInline | undefined = nested[0]; n?.type === 'em'; n = n.children.find((c) => c.type === 'em')) levels++;
    expect(levels).toBe(20_000);
    const text = plainText(nested);
    expect(text.length).toBe(20_000 * 2 + 1 + 20_000 * 2);
    expect(text.includes('*')).toBe(false);
  });

  // Their time, linear in the input, is measured by `npm run bench -- parsers` (docs/performance.md, "Readers").
  it('reads adversarial input of every kind to the end', () => {
    const cases: Record<string, (n: number) => string> = {
      brackets: (n) => '['.repeat(n) + 'a' + ']'.repeat(n),
      openBrackets: (n) => '['.repeat(n),
      linkOpeners: (n) => '[a]('.repeat(n),
      imageOpeners: (n) => '![a](b '.repeat(n),
      stars: (n) => '*a'.repeat(n),
      mixedEmphasis: (n) => '**a _b '.repeat(n),
      underscores: (n) => '_a '.repeat(n),
      backticks: (n) => '`a``'.repeat(n),
      angles: (n) => '<a'.repeat(n),
      urls: (n) => 'http://a'.repeat(n),
      quotes: (n) => '>'.repeat(n) + ' a',
      lists: (n) => Array.from({ length: n }, (_, i) => ' '.repeat(i % 40) + '- a').join('\n'),
      nestedLists: (n) => Array.from({ length: n }, (_, i) => '  '.repeat(Math.min(i, 200)) + '1. a').join('\n'),
      fences: (n) => '```\n'.repeat(n),
      tables: (n) => '|a|\n|-|\n' + '|b'.repeat(n),
      blankItems: (n) => '- a\n\n'.repeat(n),
    };
    for (const [name, make] of Object.entries(cases)) {
      const blocks = parseMarkdown(make(8_000));
      expect(Array.isArray(blocks), name).toBe(true);
      expect(blocks.length, name).toBeGreaterThan(0);
    }
  });
});
