import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseLeadActions, parseQuestion } from '../../src/coordination/tools.js';
import { resolvePlanApproval, DEFAULT_PLAN_CRITERIA } from '../../src/coordination/plan-approval.js';

describe('lead text protocol', () => {
  it('reads every action line and reports unreadable ones', () => {
    const text = [
      'Looks good.',
      'APPROVE t1',
      'REJECT t2: touches too many files',
      'ANSWER w1: use Postgres',
      'MESSAGE w2: please hurry',
      'ADD_TASK: {"title": "Docs", "dependsOn": ["t1"]}',
      'SPLIT t3: [{"title": "a"}, {"id": "x", "title": "b"}]',
      'CANCEL t4: not needed',
      'REASSIGN t5 w3',
      'REASSIGN t6',
      'SPAWN w4',
      'ADD_TASK: not json',
      'REJECT',
    ].join('\n');
    const { actions, issues } = parseLeadActions(text);
    expect(actions).toEqual([
      { type: 'review', taskId: 't1', approved: true },
      { type: 'review', taskId: 't2', approved: false, feedback: 'touches too many files' },
      { type: 'message', to: 'w1', text: 'use Postgres' },
      { type: 'message', to: 'w2', text: 'please hurry' },
      { type: 'add', task: { title: 'Docs', dependsOn: ['t1'] } },
      { type: 'split', taskId: 't3', parts: [{ title: 'a' }, { id: 'x', title: 'b' }] },
      { type: 'cancel', taskId: 't4', reason: 'not needed' },
      { type: 'reassign', taskId: 't5', to: 'w3' },
      { type: 'reassign', taskId: 't6' },
      { type: 'spawn', worker: 'w4' },
    ]);
    expect(issues).toEqual(['ADD_TASK needs a task as JSON: ADD_TASK: not json', 'REJECT needs a task id: REJECT']);
  });

  it('never throws and stays fast on arbitrary text', () => {
    fc.assert(fc.property(fc.string({ maxLength: 2000 }), (text) => {
      const parsed = parseLeadActions(text);
      expect(Array.isArray(parsed.actions)).toBe(true);
      parseQuestion(text);
    }));
    const hostile = `REASSIGN ${' '.repeat(50_000)}x`;
    // Their time on such input is measured by `npm run bench -- parsers`.
    expect(parseLeadActions(hostile).actions).toBeInstanceOf(Array);
    expect(parseLeadActions('APPROVE '.repeat(20_000)).actions).toBeInstanceOf(Array);
  });

  it('reads a worker question line', () => {
    expect(parseQuestion('Working.\nQUESTION: Tabs or spaces?\n')).toBe('Tabs or spaces?');
    expect(parseQuestion('No question here')).toBeUndefined();
  });

  it('resolves plan approval options with defaults', () => {
    expect(resolvePlanApproval(undefined)).toBeUndefined();
    expect(resolvePlanApproval(true)).toEqual({ criteria: [...DEFAULT_PLAN_CRITERIA], maxCycles: 3 });
    expect(resolvePlanApproval({ criteria: ['x'], maxCycles: 2 })).toEqual({ criteria: ['x'], maxCycles: 2 });
    expect(() => resolvePlanApproval({ criteria: [''] })).toThrow(/planApproval.criteria/);
  });
});

describe('SHUTDOWN in the text form', () => {
  it('reads a worker and an optional reason', () => {
    expect(parseLeadActions('SHUTDOWN ben: done for today\nSHUTDOWN cy\nSHUTDOWN')).toEqual({
      actions: [{ type: 'shutdown', worker: 'ben', reason: 'done for today' }, { type: 'shutdown', worker: 'cy' }],
      issues: ['SHUTDOWN needs a worker: SHUTDOWN'],
    });
  });
});
