import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/define.js';
import { MAX_AGENT_FILE_BYTES, parseAgentFile, safeParseAgentFile } from '../../src/agents/parse.js';
import { TroupeError } from '../../src/core/errors.js';

describe('parseAgentFile', () => {
  it('reads the frontmatter and uses the body as the system prompt', () => {
    const def = parseAgentFile(
      [
        '---',
        'description: Front desk',
        'models: [gpt-4.1, gpt-4.1-mini]',
        'adapter: openai',
        'temperature: 0.2',
        'router: { destinations: [billing, legal], fallback: billing }',
        'advisors: compliance',
        'handoff: approval',
        'limits: { maxTurns: 4, timeoutMs: 60000 }',
        'role: triage',
        'metadata: { team: support }',
        '---',
        'You are the front desk.',
        '',
      ].join('\n'),
      { name: 'desk' },
    );
    expect(def).toMatchObject({
      name: 'desk',
      system: 'You are the front desk.',
      description: 'Front desk',
      model: 'gpt-4.1',
      models: ['gpt-4.1', 'gpt-4.1-mini'],
      adapter: 'openai',
      temperature: 0.2,
      router: { destinations: ['billing', 'legal'], fallback: 'billing' },
      advisors: ['compliance'],
      handoff: 'approval',
      limits: { maxTurns: 4, timeoutMs: 60000 },
      role: 'triage',
      metadata: { team: 'support' },
      warnings: [],
    });
  });

  it('accepts the short router form and a name in the frontmatter', () => {
    const def = parseAgentFile('---\nname: desk\nrouter: true\nagents: [a, b]\n---\nRoute.');
    expect(def.router).toEqual({ destinations: ['a', 'b'] });
    expect(def.warnings).toEqual([]);
  });

  it('reads .ai files whose first line is a shebang', () => {
    const def = parseAgentFile('#!/usr/bin/env ai-agent\n---\nmodel: m\n---\nHello', { name: 'x' });
    expect(def).toMatchObject({ name: 'x', model: 'm', system: 'Hello' });
  });

  it('keeps unknown keys and reports them as warnings', () => {
    const def = parseAgentFile('---\nflavour: mint\ncache: { ttl: 5 }\n---\nHi', { name: 'x' });
    expect(def.extra).toEqual({ flavour: 'mint', cache: { ttl: 5 } });
    expect(def.warnings?.map((w) => w.code)).toEqual(['unknown_key', 'unknown_key']);
    expect(def.warnings?.[0]).toMatchObject({ agent: 'x', path: ['flavour'], message: 'Unknown key `flavour` is kept but not used' });
  });

  it('keeps the keys of another tool it does not use, saying whose they are', () => {
    const def = parseAgentFile('#!/usr/bin/env ai-agent\n---\ntopP: 0.9\ncache: { ttl: 5 }\n---\nHi', { name: 'x' });
    expect(def.extra).toEqual({ topP: 0.9, cache: { ttl: 5 } });
    expect(def.warnings?.map((w) => w.message)).toEqual(['`topP` (ai-agent) is kept but not used', '`cache` (ai-agent) is kept but not used']);
  });

  it('reads a known key left empty as absent, with a warning', () => {
    const def = parseAgentFile('#!/usr/bin/env ai-agent\n---\ndescription: Researcher\ntools:\n#  - web-research\n#  - fetcher\nmodels:\n---\nFind sources.', { name: 'researcher' });
    expect(def).toMatchObject({ name: 'researcher', description: 'Researcher', system: 'Find sources.' });
    expect(def.tools).toBeUndefined();
    expect(def.model).toBeUndefined();
    expect(def.warnings).toEqual([
      expect.objectContaining({ code: 'empty_key', message: '`tools` is empty: read as absent', path: ['tools'] }),
      expect.objectContaining({ code: 'empty_key', path: ['models'] }),
    ]);
  });

  it('says what it found when a value has the wrong type', () => {
    const issues = (text: string) => {
      const result = safeParseAgentFile(text, { name: 'x' });
      return result.success ? [] : result.issues.map((i) => i.message);
    };
    expect(issues('---\ntemperature: hot\n---\n')).toEqual(['`temperature`: expected a number of at least 0, got "hot" (string)']);
    expect(issues('---\ntools: 3\n---\n')).toEqual(['`tools`: expected a tool name or a list of tool names, got 3 (number)']);
    expect(issues('---\nlimits: { maxTurns: 0 }\n---\n')).toEqual(['`limits.maxTurns`: expected a positive whole number, got 0 (number)']);
    expect(issues('---\nhandoffs: [{ label: Go }]\n---\n')).toEqual(['`handoffs.0.agent`: expected an agent name, got undefined (undefined)']);
  });

  it('reads a front matter opened by `---` twice as ai-agent does', () => {
    const text = '#!/usr/bin/env ai-agent\n---\n---\ndescription: Writer\nmodels:\n  - m1\ntemperature: 0.5\n---\nYou write.';
    const def = parseAgentFile(text, { name: 'writer', file: 'writer.ai' });
    expect(def).toMatchObject({ description: 'Writer', model: 'm1', temperature: 0.5, system: 'You write.' });
    expect(def.warnings).toEqual([expect.objectContaining({ code: 'doubled_fence', file: 'writer.ai', agent: 'writer' })]);
  });

  it('warns when an empty front matter is followed by YAML-looking text', () => {
    const def = parseAgentFile('---\n---\nmodel: m1\ntools: [a]\n\nYou help.', { name: 'x', format: 'troupe' });
    expect(def.model).toBeUndefined();
    expect(def.warnings).toEqual([expect.objectContaining({ code: 'yaml_in_body' })]);
    const comments = parseAgentFile('---\n# nothing here\n---\nmodel: m1\n', { name: 'x' });
    expect(comments.warnings?.map((w) => w.code)).toEqual(['yaml_in_body']);
    expect(parseAgentFile('---\n---\nYou help: always.', { name: 'x' }).warnings).toEqual([]);
  });

  it('takes the name from the file when neither the front matter nor the options give one', () => {
    expect(parseAgentFile('---\n---\nHi', { file: 'team/devsquad.plan.agent.md' }).name).toBe('devsquad.plan');
  });

  it('refuses JavaScript front matter without evaluating it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-js-'));
    const marker = join(dir, 'pwned');
    try {
      for (const lang of ['js', 'javascript', ' js']) {
        const text = `---${lang}\nrequire('fs').writeFileSync(${JSON.stringify(marker)}, 'x'); ({ name: 'evil' })\n---\nbody`;
        expect(() => parseAgentFile(text, { name: 'x' })).toThrow(/not allowed: agent files are data/);
        const result = safeParseAgentFile(text, { name: 'x' });
        expect(result.success).toBe(false);
        if (!result.success) expect(result.issues[0]!.code).toBe('code_frontmatter');
      }
      expect(existsSync(marker)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('bounds YAML alias bombs', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const text = `---\n${levels.join('\n')}\n---\nbody`;
    // Unbounded, this would expand to 9^9 strings; the alias limit refuses it at once.
    const result = safeParseAgentFile(text, { name: 'bomb' });
    expect(result.success).toBe(false);
    if (!result.success) expect(result.issues[0]!.message).toMatch(/alias/i);
  });

  it('refuses a file over 1 MB with a clear error', () => {
    const text = `---\nname: big\n---\n${'x'.repeat(MAX_AGENT_FILE_BYTES)}`;
    expect(() => parseAgentFile(text)).toThrow(/larger than 1048576 bytes \(1 MB\)/);
  });

  it('reports schema problems with a code and the key path', () => {
    const result = safeParseAgentFile('---\ntemperature: hot\nlimits: { maxTurns: -1 }\n---\n', { name: 'x' });
    expect(result.success).toBe(false);
    if (!result.success) {
      expect(result.issues.map((i) => i.path)).toEqual([['temperature'], ['limits', 'maxTurns']]);
      expect(result.issues.every((i) => i.code === 'invalid_value')).toBe(true);
    }
    expect(() => parseAgentFile('---\nhandoff: [a, b]\n---\n', { name: 'x' })).toThrow(expect.objectContaining({ code: 'invalid_agent' }));
    expect(() => parseAgentFile('---\nrouter: true\n---\n', { name: 'x' })).toThrow(/needs `agents`/);
    expect(() => parseAgentFile('---\n: : :\n  - [\n---\n', { name: 'x' })).toThrow(expect.objectContaining({ code: 'parse_error' }));
    expect(() => parseAgentFile('no frontmatter')).toThrow(/name/);
  });

  it('never throws an untyped error on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.constantFrom('', '---\n', '#!x\n---\n'), (body, prefix) => {
        const text = `${prefix}${body}`;
        const result = safeParseAgentFile(text, { name: 'p' });
        expect(typeof result.success).toBe('boolean');
        try {
          parseAgentFile(text, { name: 'p' });
        } catch (error) {
          expect(error).toBeInstanceOf(TroupeError);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('defineAgent', () => {
  it('validates a definition in code', () => {
    expect(defineAgent({ name: 'desk', system: 'Route', advisors: 'risk' })).toMatchObject({ name: 'desk', advisors: ['risk'] });
    expect(() => defineAgent({ name: 'bad name!' })).toThrow(expect.objectContaining({ code: 'invalid_agent' }));
  });
});
