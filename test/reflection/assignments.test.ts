import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TASK_SEPARATOR, parseAssignments, requireAssignments, safeParseAssignments } from '../../src/reflection/assignments.js';

const workers = ['session-a', 'session-b'];

describe('parseAssignments', () => {
  it('reads @worker blocks in order', () => {
    const text = '@worker:session-a\nBuild the login form.\n@end\n@worker:session-b\nAdd the API endpoint.\n@end';
    expect(parseAssignments(text, workers)).toEqual({
      assignments: [
        { worker: 'session-a', task: 'Build the login form.' },
        { worker: 'session-b', task: 'Add the API endpoint.' },
      ],
      unmatched: [],
    });
  });
  it('finds nothing in a direct answer', () => {
    expect(parseAssignments("I'll handle this myself.", workers)).toEqual({ assignments: [], unmatched: [] });
  });
  it('puts unknown names in unmatched', () => {
    expect(parseAssignments('\n@worker:unknown\nDo it.\n@end', workers)).toEqual({ assignments: [], unmatched: ['unknown'] });
  });
  it('ends a task at the next @worker: or the end of the text, and reads the rest of the line', () => {
    const text = 'Plan:\n@worker:session-a Build it\nwith tests\n @worker:session-b Ship it';
    expect(parseAssignments(text, workers).assignments).toEqual([
      { worker: 'session-a', task: 'Build it\nwith tests' },
      { worker: 'session-b', task: 'Ship it' },
    ]);
  });
  it('ignores @worker: glued to a word', () => {
    expect(parseAssignments('email me@worker:session-a now', workers).assignments).toEqual([]);
  });
  it('matches names case-insensitively after stripping backticks and quotes, returning the canonical name', () => {
    const text = '@worker:`SESSION-A`\nOne.\n@end\n@worker:"Session-B"\nTwo.\n@end';
    expect(parseAssignments(text, workers).assignments.map((a) => a.worker)).toEqual(['session-a', 'session-b']);
  });
  it('does no fuzzy matching', () => {
    expect(parseAssignments('@worker:session\nx\n@end\n@worker:session-a2\ny', workers)).toEqual({ assignments: [], unmatched: ['session', 'session-a2'] });
  });
  it('skips empty tasks and merges two tasks for one worker', () => {
    const text = '@worker:session-a\n@end\n@worker:session-b\nFirst.\n@end\n@worker:session-b\nSecond.\n@end';
    expect(parseAssignments(text, workers).assignments).toEqual([{ worker: 'session-b', task: `First.${TASK_SEPARATOR}Second.` }]);
  });
  it('reads a bare JSON array', () => {
    const text = '[{"worker":"session-b","task":"Add the endpoint"},{"worker":"nobody","task":"x"}]';
    expect(parseAssignments(text, workers)).toEqual({ assignments: [{ worker: 'session-b', task: 'Add the endpoint' }], unmatched: ['nobody'] });
  });
  it('reads a JSON array in a ```json fence', () => {
    const text = 'Here is the plan:\n```json\n[{ "worker": "session-a", "task": "Build" }]\n```\n';
    expect(parseAssignments(text, workers).assignments).toEqual([{ worker: 'session-a', task: 'Build' }]);
  });
  it('falls back to the text protocol when the JSON is broken', () => {
    const text = '```json\n[{ "worker": "session-a", "task": \n```\n@worker:session-b\nDo it\n@end';
    expect(parseAssignments(text, workers).assignments).toEqual([{ worker: 'session-b', task: 'Do it' }]);
  });
  it('cuts an overlong unknown name', () => {
    const { unmatched } = parseAssignments(`@worker:${'x'.repeat(1000)} task`, workers);
    expect(unmatched[0]).toBe(`${'x'.repeat(200)}…`);
  });
  it('comes in a safe and a throwing form', () => {
    expect(safeParseAssignments('nothing', workers)).toMatchObject({ success: false, issues: [{ code: 'no_assignments' }] });
    expect(safeParseAssignments('@worker:session-a do', workers)).toMatchObject({ success: true, data: { assignments: [{ worker: 'session-a' }] } });
    expect(() => requireAssignments('@worker:ghost x', workers)).toThrow(/unknown workers: ghost/);
    try {
      requireAssignments('nothing', workers);
    } catch (error) {
      expect(error).toMatchObject({ code: 'no_assignments' });
    }
  });
  it('matches worker names with spaces (the longest known name) and markers in any case', () => {
    // An orchestrator's plan for a squad whose members have spaces in their names, as troupe's planning prompt shows the form.
    const plan = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reflection', 'plan-spaced-names.md'), 'utf8');
    const squad = ['Code Reviewer', 'Code', 'Test Writer', 'Docs Writer'];
    expect(parseAssignments(plan, squad)).toEqual({
      assignments: [
        { worker: 'Code Reviewer', task: 'Review `src/auth/session.ts` for token expiry bugs. Focus on the refresh path.' },
        { worker: 'Test Writer', task: 'Write regression tests for the refresh path,\none for an expired token and one for a revoked token.' },
        { worker: 'Docs Writer', task: 'Update docs/auth.md with the new expiry rules.' },
      ],
      unmatched: ['Security'],
    });
    expect(requireAssignments('@worker:Code Reviewer\nReview it.\n@end', ['Code Reviewer']).assignments).toEqual([{ worker: 'Code Reviewer', task: 'Review it.' }]);
  });
  it('prefers the longest name, and falls back to a shorter one that is known', () => {
    expect(parseAssignments('@worker:code reviewer lead: check it', ['Code', 'Code Reviewer', 'Code Reviewer Lead']).assignments).toEqual([
      { worker: 'Code Reviewer', task: 'lead: check it' },
    ]);
    expect(parseAssignments('@worker:Code Reviewers check it', ['Code', 'Code Reviewer']).assignments).toEqual([{ worker: 'Code', task: 'Reviewers check it' }]);
  });
  it('matches JSON names by the same rule', () => {
    expect(parseAssignments('[{"worker": "🧪 test  writer", "task": "x"}]', ['Test Writer']).assignments).toEqual([{ worker: 'Test Writer', task: 'x' }]);
  });
  it('never throws on arbitrary text, and every assignment names a listed worker with a non-empty task', () => {
    const alphabet = fc.constantFrom('@worker:', '@end', 'session-a', 'SESSION-B', ' ', '\n', '`', '"', '[', ']', '{', '}', 'x', '```json', ':');
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.array(alphabet, { maxLength: 60 }).map((a) => a.join(''))), (text) => {
        const { assignments, unmatched } = parseAssignments(text, workers);
        for (const a of assignments) {
          expect(workers).toContain(a.worker);
          expect(a.task.trim()).not.toBe('');
        }
        expect(new Set(unmatched).size).toBe(unmatched.length);
      }),
      { numRuns: 500 },
    );
  });
});
