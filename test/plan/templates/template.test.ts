import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { SimulatedClock } from '../../../src/core/clock.js';
import { isTroupeError } from '../../../src/core/errors.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import {
  TemplateError,
  checkPlanTemplate,
  fillPlaceholders,
  instantiatePlanTemplate,
  parsePlanTemplateText,
  scanPlaceholders,
  type PlanTemplate,
} from '../../../src/plan/templates/template.js';
import { templateRegistry } from '../../../src/plan/templates/registry.js';
import { drive } from '../helpers.js';

const template: PlanTemplate = {
  name: 'fix-module',
  description: 'Find and fix a bug in one module',
  parameters: {
    module: { type: 'string', description: 'the module folder', maxLength: 40 },
    retries: { type: 'integer', default: 1, minimum: 0, maximum: 5 },
    strict: { type: 'boolean', default: false },
    depth: { type: 'string', enum: ['quick', 'thorough'], default: 'quick' },
  },
  planSummary: 'Fix the {{module}} module',
  chunks: [
    { sequenceIndex: 0, title: 'Analyse {{ module }}', prompt: 'Read src/{{module}} ({{depth}} pass) and find the bug.', dependsOnIndexes: [], workingScope: ['src/{{module}}/'], complexity: 'Medium', role: 'CodeAnalysis' },
    { sequenceIndex: 1, title: 'Fix {{module}}', prompt: 'Fix it; strict={{strict}}, retries={{retries}}. Keep {{#each}} as text.', dependsOnIndexes: [0], complexity: 'Low', role: 'Implementation' },
  ],
};

function issuesOf(fn: () => unknown): TemplateError {
  try {
    fn();
  } catch (error) {
    if (error instanceof TemplateError) return error;
    throw error;
  }
  throw new Error('expected a TemplateError');
}

describe('scanPlaceholders', () => {
  it('finds {{name}} with optional spaces and leaves every other brace as text', () => {
    expect(scanPlaceholders('a {{x}} b {{ y_2 }} c {{{z}}} d {{1a}} {{a b}} {{#each}} {{').map((p) => p.name)).toEqual(['x', 'y_2', 'z']);
    expect(fillPlaceholders('{{{z}}}', () => 'Z')).toBe('{Z}');
    expect(fillPlaceholders('no placeholders', () => 'x')).toBe('no placeholders');
  });

  it('does not scan a value again', () => {
    expect(fillPlaceholders('{{a}}{{b}}', (n) => (n === 'a' ? '{{b}}' : 'B'))).toBe('{{b}}B');
  });

  it('agrees with a reference on random text and reads adversarial text in linear time', () => {
    const reference = (text: string) => [...text.matchAll(/\{\{[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\}\}/g)].map((m) => m[1]);
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('{', '}', ' ', 'a', '_', '1', 'x', '\t') , maxLength: 60 }), (text) => {
        expect(scanPlaceholders(text).map((p) => p.name)).toEqual(reference(text));
      }),
      { numRuns: 500 },
    );
    // Counted work, not time: every character is read a bounded number of times.
    for (const unit of ['{{ ', '{{a', '{{{', '{{a }', '{ {']) {
      const text = unit.repeat(50_000);
      const found = scanPlaceholders(text);
      expect(found.length).toBe(0);
    }
  });
});

describe('checkPlanTemplate', () => {
  it('accepts a sound template and warns about an unused parameter', () => {
    const check = checkPlanTemplate({ ...template, parameters: { ...template.parameters, unused: { type: 'number' } } });
    expect(check.valid).toBe(true);
    expect(check.warnings).toEqual([{ path: 'parameters.unused', code: 'unused_parameter', message: 'parameter "unused" is declared but no text uses it' }]);
  });

  it('names every structural problem: unknown placeholders, bad defaults, bad graph, bad schema', () => {
    const check = checkPlanTemplate({
      ...template,
      parameters: { ...template.parameters, retries: { type: 'integer', default: 9, maximum: 5 }, flag: { type: 'boolean', enum: ['x'] } },
      planSummary: 'Fix {{modul}}',
      chunks: [template.chunks[0], { ...template.chunks[1], dependsOnIndexes: [1] }],
    });
    expect(check.valid).toBe(false);
    if (check.valid) return;
    expect(check.errors.map((e) => `${e.code} ${e.path}`)).toEqual([
      'unknown_parameter planSummary',
      'bad_default parameters.retries.default',
      'schema parameters.flag.enum',
      'invalid_plan chunks',
    ]);
    expect(check.errors[3]!.message).toBe('chunk 1 depends on itself');
    const schema = checkPlanTemplate({ name: 'Bad Name', planSummary: 's', chunks: [], parameters: { 'bad-name': { type: 'date' } } });
    expect(schema.valid).toBe(false);
    if (!schema.valid) expect(schema.errors.map((e) => e.path)).toEqual(['name', 'parameters.bad-name']);
  });
});

describe('instantiatePlanTemplate', () => {
  it('reads numbers given as text only when they are plain decimal text', () => {
    const numeric: PlanTemplate = {
      name: 'numbers',
      parameters: { count: { type: 'integer' }, ratio: { type: 'number' } },
      planSummary: '{{count}} at {{ratio}}',
      chunks: [{ sequenceIndex: 0, title: 'Count', prompt: 'Count {{count}} at {{ratio}}', dependsOnIndexes: [], complexity: 'Low', role: 'Generic' }],
    };
    const values = (count: string, ratio = '1') => instantiatePlanTemplate(numeric, { count, ratio }).values;
    expect(values('3')).toEqual({ count: 3, ratio: 1 });
    expect(values('-3', '-2.5')).toEqual({ count: -3, ratio: -2.5 });
    expect(values('3', '1e3')).toEqual({ count: 3, ratio: 1000 });
    expect(values('3', '.5')).toEqual({ count: 3, ratio: 0.5 });
    for (const loose of ['0x3', '0b11', '0o3', ' 3 ', '3e0', '+3', '3.0', '', 'Infinity']) {
      expect(() => values(loose), loose).toThrow(/parameter "count": expected a finite number, got/);
    }
    for (const loose of ['0x10', ' 16', '+16', '1e', 'NaN', '1_000']) {
      expect(() => values('1', loose), loose).toThrow(/parameter "ratio": expected a finite number, got/);
    }
    const flag: PlanTemplate = { ...numeric, name: 'flag', parameters: { count: { type: 'integer' }, ratio: { type: 'boolean' } } };
    expect(instantiatePlanTemplate(flag, { count: '1', ratio: 'true' }).values.ratio).toBe(true);
    expect(() => instantiatePlanTemplate(flag, { count: '1', ratio: ' true' })).toThrow(/expected a boolean/);
  });

  it('refuses values that would fill in a plan of more than a million characters, before building it', () => {
    const prompt = Array.from({ length: 20_000 }, () => '{{text}}').join(' ');
    const big: PlanTemplate = {
      name: 'big',
      parameters: { text: { type: 'string' } },
      planSummary: 'Big',
      chunks: [{ sequenceIndex: 0, title: 'Big', prompt, dependsOnIndexes: [], complexity: 'Low', role: 'Generic' }],
    };
    expect(instantiatePlanTemplate(big, { text: 'x' }).plan.chunks[0]!.prompt.length).toBe(39_999);
    let error: unknown;
    try {
      instantiatePlanTemplate(big, { text: 'x'.repeat(1000) });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TemplateError);
    expect(error).toMatchObject({ code: 'invalid_template_values', issues: [{ path: 'plan', code: 'too_large' }] });
  });

  it('fills titles, prompts, paths and the summary with typed values and defaults', () => {
    const { plan, values } = instantiatePlanTemplate(template, { module: 'cache', retries: '3', strict: 'true' });
    expect(values).toEqual({ module: 'cache', retries: 3, strict: true, depth: 'quick' });
    expect(plan.planSummary).toBe('Fix the cache module');
    expect(plan.chunks[0]).toMatchObject({ title: 'Analyse cache', prompt: 'Read src/cache (quick pass) and find the bug.', workingScope: ['src/cache/'] });
    expect(plan.chunks[1]!.prompt).toBe('Fix it; strict=true, retries=3. Keep {{#each}} as text.');
  });

  it('refuses bad values with every problem named, before anything runs', () => {
    const error = issuesOf(() => instantiatePlanTemplate(template, { retries: 'many', strict: 'yes', depth: 'deep', colour: 'red' }));
    expect(error.code).toBe('invalid_template_values');
    expect(error.issues.map((i) => `${i.code} ${i.path}`)).toEqual([
      'undeclared_value values.colour',
      'missing_value values.module',
      'bad_value values.retries',
      'bad_value values.strict',
      'bad_value values.depth',
    ]);
    expect(error.message).toContain('parameter "depth": expected one of "quick", "thorough", got "deep"');
    expect(issuesOf(() => instantiatePlanTemplate(template, { module: 'x'.repeat(41) })).issues[0]!.message).toContain('at most 40 characters');
    expect(issuesOf(() => instantiatePlanTemplate(template, { module: 'm', retries: 2.5 })).issues[0]!.message).toContain('expected an integer');
  });

  it('checks the plan that results: prompt length and paths that leave the workspace', () => {
    const short = { ...template, chunks: [{ ...template.chunks[0]!, prompt: '{{module}}' }] };
    const tooShort = issuesOf(() => instantiatePlanTemplate(short, { module: 'db' }));
    expect(tooShort.code).toBe('invalid_template');
    expect(tooShort.issues).toEqual([{ path: 'chunks.0.prompt', code: 'invalid_plan', message: 'prompt must be at least 10 characters' }]);
    const rooted = { ...template, chunks: [{ ...template.chunks[0]!, workingScope: ['{{module}}'] }] };
    for (const [t, module] of [[template, '../../etc'], [template, 'a/..'], [rooted, '/etc'], [rooted, 'C:\\x']] as const) {
      const escaped = issuesOf(() => instantiatePlanTemplate(t, { module }));
      expect(escaped.issues.map((i) => i.code)).toEqual(['unsafe_path']);
    }
  });

  it('refuses a structurally invalid template with invalid_template', () => {
    const error = issuesOf(() => instantiatePlanTemplate({ ...template, planSummary: '{{nope}}' }, { module: 'a' }));
    expect(isTroupeError(error, 'invalid_template')).toBe(true);
  });

  it('gives a plan that runs on the scripted adapter', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ clock, latencyMs: 5, rules: [{ agent: 'CodeAnalysis', reply: 'the cache never evicts' }, { agent: 'Implementation', reply: 'added eviction' }] });
    const { plan } = instantiatePlanTemplate(template, { module: 'cache' });
    const outcome = await drive(clock, executePlan(plan, { adapter, clock }));
    expect(outcome.results.map((r) => `${r.title}: ${r.status} ${r.output}`)).toEqual(['Analyse cache: completed the cache never evicts', 'Fix cache: completed added eviction']);
  });
});

describe('parsePlanTemplateText', () => {
  it('reads YAML and JSON as data, and refuses text that is neither', () => {
    const yaml = 'name: t\nparameters:\n  x: { type: string }\nplanSummary: "s {{x}}"\nchunks:\n  - { sequenceIndex: 0, title: "do {{x}}", prompt: "do the thing {{x}}", complexity: Low, role: Generic }\n';
    expect(checkPlanTemplate(parsePlanTemplateText(yaml)).valid).toBe(true);
    expect(parsePlanTemplateText(JSON.stringify(template))).toEqual(template);
    expect(issuesOf(() => parsePlanTemplateText('a: [1, 2')).code).toBe('invalid_template');
  });
});

describe('templateRegistry', () => {
  it('saves, lists, reads and deletes templates; refuses invalid ones and bad names', async () => {
    const store = memoryStore();
    const registry = templateRegistry(store);
    await registry.save(template);
    await registry.save({ ...template, name: 'another' });
    expect(await registry.list()).toEqual(['another', 'fix-module']);
    expect(await registry.get('fix-module')).toEqual(template);
    expect(await registry.get('missing')).toBeUndefined();
    await expect(registry.save({ ...template, planSummary: '{{nope}}' })).rejects.toMatchObject({ code: 'invalid_template' });
    await expect(registry.get('../x')).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(await registry.delete('another')).toBe(true);
    expect(await registry.list()).toEqual(['fix-module']);
  });

  it('reports a stored document that is not a template or is newer', async () => {
    const store = memoryStore();
    await store.set('templates/broken', { version: 1, template: { name: 'broken' } });
    await store.set('templates/newer', { version: 9, template });
    const registry = templateRegistry(store);
    await expect(registry.get('broken')).rejects.toMatchObject({ code: 'store_error' });
    await expect(registry.get('newer')).rejects.toThrow(/schema version 9/);
  });

  it('honours an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(templateRegistry(memoryStore()).save(template, { signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
  });
});
