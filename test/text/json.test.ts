import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isTroupeError } from '../../src/core/errors.js';
import { MAX_JSON_DEPTH, MAX_REPAIR_CHARS, extractJson, findJson, safeFindJson } from '../../src/text/json.js';

describe('the JSON search', () => {
  it('tries ```json fences, then other fences, then the text', () => {
    const text = '{"text": 1}\n```ts\n{"fence": 2}\n```\n```json\n{"json": 3}\n```';
    expect(safeFindJson(text)).toEqual({ success: true, data: { data: { json: 3 }, json: '{"json": 3}', source: 'json-fence', repaired: false } });
    expect(safeFindJson(text.replace('json\n', 'text\n'))).toMatchObject({ success: true, data: { data: { fence: 2 }, source: 'fence' } });
  });

  it('passes over candidates the schema refuses, and looks inside a parsed value', () => {
    const schema = z.object({ steps: z.array(z.number()) });
    expect(findJson('Not this: {"steps": ["a"]}. This: {"steps": [1]}', { schema }).data).toEqual({ steps: [1] });
    expect(findJson('{"plan": {"steps": [2]}}', { schema })).toEqual({ data: { steps: [2] }, json: '{"steps":[2]}', source: 'text', repaired: false });
  });

  it('takes a function in the safe-parse shape as the schema', () => {
    const even = (value: unknown) =>
      Array.isArray(value) && value.length % 2 === 0 ? { success: true as const, data: value } : { success: false as const, issues: [{ code: 'odd', message: 'odd length' }] };
    expect(extractJson('[1] then [1, 2]', { kind: 'array', schema: even })).toBe('[1, 2]');
    expect(safeFindJson('[1]', { kind: 'array', schema: even })).toEqual({ success: false, issues: [{ code: 'odd', message: 'odd length' }] });
  });

  it('repairs only when nothing parses as it is, and says so', () => {
    expect(findJson('{"a": 1,} and {"b": 2}')).toMatchObject({ data: { b: 2 }, repaired: false });
    expect(findJson("{'a': [1, 2,],}")).toMatchObject({ data: { a: [1, 2] }, repaired: true });
    expect(findJson('cut off: {"a": [1, {"b": "x')).toMatchObject({ data: { a: [1, { b: 'x' }] }, repaired: true });
    expect(safeFindJson('{"a": 1,}', { repair: false }).success).toBe(false);
  });

  it('never repairs prose or placeholders into JSON', () => {
    expect(extractJson('Use {name} and [worker A] here.')).toBeUndefined();
    expect(extractJson('Use {name} and [worker A] here.', 'array')).toBeUndefined();
  });

  it('leaves a damaged value longer than MAX_REPAIR_CHARS to the caller', () => {
    const long = `{"a": "${'x'.repeat(MAX_REPAIR_CHARS)}",}`;
    expect(safeFindJson(long)).toMatchObject({ success: false, issues: [{ code: 'invalid_json' }] });
  });

  it('does not take values nested deeper than MAX_JSON_DEPTH', () => {
    const deep = `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`;
    expect(extractJson(`\`\`\`json\n${deep}\n\`\`\``, 'array')).toBeUndefined();
    expect(extractJson(`\`\`\`json\n[${deep.slice(2, -2)}]\n\`\`\``, 'array')).toBe(`[${deep.slice(2, -2)}]`);
  });

  it('explains why nothing passed', () => {
    expect(safeFindJson('nothing')).toEqual({ success: false, issues: [{ code: 'no_json', message: 'no JSON object found' }] });
    expect(safeFindJson('[1, 2]')).toMatchObject({ success: false, issues: [{ code: 'wrong_kind' }] });
    expect(safeFindJson('{"a": }', { repair: false })).toMatchObject({ success: false, issues: [{ code: 'invalid_json' }] });
    expect(safeFindJson('{"a": 1}', { schema: z.object({ a: z.string() }) })).toMatchObject({ success: false, issues: [{ code: 'schema', message: expect.stringMatching(/^a: /) }] });
    let error: unknown;
    try {
      findJson('nothing');
    } catch (e) {
      error = e;
    }
    expect(isTroupeError(error, 'parse_error')).toBe(true);
  });
});
