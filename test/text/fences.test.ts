import { describe, expect, it } from 'vitest';
import { closesFence, fencedBlocks, openingFence, scanLines, type LineKind } from '../../src/text/fences.js';

const kinds = (text: string) => {
  const out: Array<[LineKind, string]> = [];
  scanLines(text, (l) => out.push([l.kind, l.text]));
  return out;
};

describe('the fence scanner', () => {
  it('opens with three or more backticks or tildes and an info string', () => {
    expect(openingFence('```')).toEqual({ marker: '`', length: 3, info: '' });
    expect(openingFence('  ~~~~ json title="x" ')).toEqual({ marker: '~', length: 4, info: 'json title="x"' });
    expect(openingFence('``')).toBeUndefined();
    expect(openingFence('```js`')).toBeUndefined(); // a backtick in a backtick info string: inline code
    expect(openingFence('~~~ a`b')).toEqual({ marker: '~', length: 3, info: 'a`b' });
  });

  it('closes only with the same character, at least as long, and nothing after it', () => {
    const fence = { marker: '`', length: 4, info: '' } as const;
    expect(closesFence('````', fence)).toBe(true);
    expect(closesFence('  `````  ', fence)).toBe(true);
    expect(closesFence('```', fence)).toBe(false);
    expect(closesFence('~~~~', fence)).toBe(false);
    expect(closesFence('```` x', fence)).toBe(false);
  });

  it('quotes a three-backtick block inside a four-backtick one', () => {
    expect(kinds('a\n````md\n```ts\nx\n```\n````\nb')).toEqual([
      ['text', 'a'],
      ['open', '````md'],
      ['code', '```ts'],
      ['code', 'x'],
      ['code', '```'],
      ['close', '````'],
      ['text', 'b'],
    ]);
  });

  it('runs an unclosed block to the end of the text', () => {
    expect(kinds('~~~\n```\nz').map(([k]) => k)).toEqual(['open', 'code', 'code']);
    expect(fencedBlocks('x\n```json\n{"a": 1}')).toMatchObject([{ language: 'json', content: '{"a": 1}', closed: false }]);
    expect(fencedBlocks('```')).toMatchObject([{ content: '', closed: false }]);
  });

  it('gives each block its language, content and offsets in the normalised text', () => {
    const [block] = fencedBlocks('\uFEFFPlan:\r\n```JSON {.x}\r\n{"a": 1}\r\n[2]\r\n```\r\n');
    expect(block).toEqual({ fence: { marker: '`', length: 3, info: 'JSON {.x}' }, language: 'json', content: '{"a": 1}\n[2]', start: 19, end: 31, closed: true });
  });
});
