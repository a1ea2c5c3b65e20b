import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { isTroupeError } from '../../src/core/errors.js';
import { usageByAgent } from '../../src/core/ops.js';
import { run } from '../../src/core/run.js';
import {
  GuardrailTripError,
  classifierGuardrail,
  parseClassifierVerdict,
  safeParseClassifierVerdict,
  withGuardrails,
} from '../../src/guardrails/index.js';
import { agent } from '../../src/patterns/agent.js';
import { executePlan } from '../../src/plan/engine/execute.js';
import { chunk, planOf } from '../plan/helpers.js';

describe('classifier verdicts', () => {
  it('reads VERDICT and REASON lines outside fenced code, in any case and quoting', () => {
    expect(parseClassifierVerdict('Thinking...\nverdict: `Block`\nREASON: asks for homework')).toEqual({ verdict: 'block', reason: 'asks for homework' });
    expect(parseClassifierVerdict('```\nVERDICT: block\n```\nVERDICT: "allow".')).toEqual({ verdict: 'allow' });
    expect(safeParseClassifierVerdict('I think it is fine')).toMatchObject({ success: false, issues: [{ code: 'no_verdict' }] });
    expect(safeParseClassifierVerdict('VERDICT: maybe')).toMatchObject({ success: false, issues: [{ code: 'unknown_verdict' }] });
    let thrown: unknown;
    try {
      parseClassifierVerdict('VERDICT: maybe');
    } catch (error) {
      thrown = error;
    }
    expect(isTroupeError(thrown, 'parse_error')).toBe(true);
  });

  it('never throws an untyped error on any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        const result = safeParseClassifierVerdict(text);
        expect(typeof result.success).toBe('boolean');
      }),
    );
  });
});

describe('classifierGuardrail', () => {
  it('asks an agent on a cheaper model; a block trips, and its turns are in the trace', async () => {
    const judge = agent({ name: 'judge', model: 'small-model', system: 'You check requests.' });
    const adapter = scriptedAdapter({ replies: { judge: ['VERDICT: block\nREASON: homework help'] }, fallback: 'never' });
    const guarded = withGuardrails(agent({ name: 'tutor', model: 'big-model' }), { input: [classifierGuardrail(judge, { name: 'topic', policy: 'Block homework.' })] });
    const error = (await run(guarded, 'Solve my homework', { adapter }).catch((e: unknown) => e)) as GuardrailTripError;
    expect(error).toBeInstanceOf(GuardrailTripError);
    expect(error.guardrail).toBe('topic');
    expect(error.verdict).toEqual({ tripped: true, reason: 'homework help', info: { classifier: 'judge', verdict: 'block' } });
    expect(adapter.calls.map((c) => c.agent)).toEqual(['judge']);
    expect(adapter.calls[0]!.text).toContain('## POLICY\nBlock homework.');
    expect(adapter.calls[0]!.text).toContain('## TEXT TO CHECK (input)\nSolve my homework');
    expect(adapter.calls[0]!.spec.model).toBe('small-model');
    expect(usageByAgent(error.trace).judge?.turns).toBe(1);
  });

  it('allow lets the run go on; a reply without a verdict trips unless unclear is allow', async () => {
    const judge = agent({ name: 'judge' });
    const adapter = scriptedAdapter({ replies: { judge: ['VERDICT: allow', 'hmm', 'hmm'], tutor: ['4', '5'] } });
    const ok = await run(withGuardrails(agent({ name: 'tutor' }), { input: [classifierGuardrail(judge)] }), '2 + 2?', { adapter });
    expect(ok.output).toBe('4');
    const unclear = await run(withGuardrails(agent({ name: 'tutor' }), { input: [classifierGuardrail(judge, { unclear: 'allow' })] }), '2 + 3?', { adapter });
    expect(unclear.output).toBe('5');
    const error = await run(withGuardrails(agent({ name: 'tutor' }), { input: [classifierGuardrail(judge)] }), '2 + 4?', { adapter }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GuardrailTripError);
    expect((error as GuardrailTripError).verdict.reason).toContain('The classifier gave no verdict');
  });

  it('a stream guardrail that is an agent does not guard itself', async () => {
    const judge = agent({ name: 'judge' });
    const adapter = scriptedAdapter({ replies: { judge: ['VERDICT: allow'], writer: ['A story.'] } });
    const result = await run(withGuardrails(agent({ name: 'writer' }), { stream: [classifierGuardrail(judge)], parallelInput: true }), 'Tell a story', { adapter });
    expect(result.output).toBe('A story.');
    expect(adapter.calls.map((c) => c.agent)).toEqual(['writer', 'judge']);
  });
});

describe('guardrails on plan chunks', () => {
  it('a chunk whose answer trips ends the plan and the run; chunks not started never run', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { match: 'Chunk 0', reply: 'the API key is abc' },
        { match: 'Chunk 1', reply: 'fine' },
      ],
    });
    const noKeys = { name: 'no-keys', check: (text: string) => ({ tripped: text.includes('API key') }) };
    const plan = planOf(chunk(0, []), chunk(1, [0]));
    const error = await executePlan(plan, { adapter, guardrails: { output: [noKeys] }, retry: { maxRetries: 2 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GuardrailTripError);
    expect((error as GuardrailTripError).details).toMatchObject({ guardrail: 'no-keys', stage: 'output', runnable: 'chunk 0' });
    expect(adapter.calls).toHaveLength(1);
  });
});
