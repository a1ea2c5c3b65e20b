import { describe, expect, it } from 'vitest';
import { MAX_FRONT_MATTER_CHARS, readFrontMatterData, splitFrontMatter } from '../../src/agents/front-matter.js';
import { safeParseAgentFile } from '../../src/agents/parse.js';

describe('splitFrontMatter', () => {
  it('splits at the next `---` line, in any line ends', () => {
    const split = { success: true, data: { present: true, language: '', matter: 'model: m\nname: a', body: 'Body\n---\nmore' } };
    expect(splitFrontMatter('---\nmodel: m\nname: a\n---  \nBody\n---\nmore')).toEqual(split);
    expect(splitFrontMatter('\uFEFF---\r\nmodel: m\r\nname: a\r\n---  \r\nBody\r\n---\r\nmore')).toEqual(split);
  });

  it('reads a text without front matter as all body', () => {
    expect(splitFrontMatter('Just a prompt.')).toEqual({ success: true, data: { present: false, language: '', matter: '', body: 'Just a prompt.' } });
    expect(splitFrontMatter('----\nA rule, not a fence.')).toMatchObject({ success: true, data: { present: false } });
  });

  it('refuses a front matter never closed, or longer than the bound', () => {
    expect(splitFrontMatter('---\nmodel: m\nYou are...')).toMatchObject({ success: false, issues: [{ code: 'unclosed_front_matter' }] });
    expect(splitFrontMatter(`---\n${'a: 1\n'.repeat(MAX_FRONT_MATTER_CHARS / 5 + 1)}---\nx`)).toMatchObject({ success: false, issues: [{ code: 'front_matter_too_large' }] });
    expect(splitFrontMatter(`---\n${'\n'.repeat(10)}---\nx`, { maxChars: 5 })).toMatchObject({ success: false, issues: [{ code: 'front_matter_too_large' }] });
  });
});

describe('readFrontMatterData', () => {
  const read = (text: string) => {
    const split = splitFrontMatter(text);
    if (!split.success) throw new Error('no split');
    return readFrontMatterData(split.data);
  };

  it('reads YAML and JSON as data', () => {
    expect(read('---\nmodel: m\nlimits: { maxTurns: 3 }\n---\n')).toEqual({ success: true, data: { model: 'm', limits: { maxTurns: 3 } } });
    expect(read('---json\n{"model": "m"}\n---\n')).toEqual({ success: true, data: { model: 'm' } });
    expect(read('---\n\n---\nbody')).toEqual({ success: true, data: {} });
  });

  it('refuses code front matter without evaluating it', () => {
    (globalThis as { evaluated?: boolean }).evaluated = false;
    const result = read('---js\n{ model: (globalThis.evaluated = true, "m") }\n---\n');
    expect(result).toMatchObject({ success: false, issues: [{ code: 'code_frontmatter' }] });
    expect((globalThis as { evaluated?: boolean }).evaluated).toBe(false);
  });

  it('bounds YAML aliases and refuses lists', () => {
    const bomb = `---\na: &a [x, x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 12 }, (_, i) => `l${i}: &l${i} [${Array(10).fill(i === 0 ? '*a' : `*l${i - 1}`).join(', ')}]`).join('\n')}\n---\n`;
    expect(read(bomb)).toMatchObject({ success: false, issues: [{ code: 'invalid_yaml' }] });
    expect(read('---\n- a\n- b\n---\n')).toMatchObject({ success: false, issues: [{ code: 'invalid_yaml' }] });
  });

  it('an agent file with an unclosed front matter is unreadable, not an empty agent', () => {
    expect(safeParseAgentFile('---\nmodel: m\nYou are...', { name: 'a' })).toMatchObject({ success: false, issues: [{ code: 'unclosed_front_matter' }] });
  });
});
