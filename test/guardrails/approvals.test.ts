import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { run } from '../../src/core/run.js';
import { defineTool } from '../../src/core/tools.js';
import { withGuardrails } from '../../src/guardrails/with-guardrails.js';
import { agent } from '../../src/patterns/agent.js';
import { asTool } from '../../src/patterns/as-tool.js';
import { ApprovalQueue, type ApprovalDecision, type ApprovalRequest } from '../../src/guardrails/approvals.js';

function manual() {
  const asked: ApprovalRequest[] = [];
  const answers: Array<(d: ApprovalDecision) => void> = [];
  const queue = new ApprovalQueue({
    handler: (request) =>
      new Promise<ApprovalDecision>((resolve) => {
        asked.push(request);
        answers.push(resolve);
      }),
  });
  return { queue, asked, answer: (d: ApprovalDecision) => answers.shift()!(d) };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('ApprovalQueue', () => {
  it('hands requests to the handler one at a time and reports the pending count', async () => {
    const { queue, asked, answer } = manual();
    const counts: number[] = [];
    queue.on('pending', (n) => counts.push(n));
    const a = queue.request({ tool: 'write_file', agent: 'w1' });
    const b = queue.request({ tool: 'delete', agent: 'w2' });
    await tick();
    expect(asked.map((r) => r.agent)).toEqual(['w1']);
    expect(queue.pending).toBe(2);
    answer({ approved: true });
    await tick();
    expect(asked.map((r) => r.agent)).toEqual(['w1', 'w2']);
    answer({ approved: false });
    expect(await a).toBe(true);
    expect(await b).toBe(false);
    await tick();
    expect(queue.pending).toBe(0);
    expect(counts).toEqual([1, 2, 1, 0]);
  });

  it('remembers a session decision for the orchestration and a global one for the process, never a once', async () => {
    const { queue, asked, answer } = manual();
    const once = queue.request({ tool: 'shell', agent: 'w1', runId: 'plan-a' });
    await tick();
    answer({ approved: true, scope: 'once' });
    await once;
    const again = queue.request({ tool: 'shell', agent: 'w1', runId: 'plan-a' });
    await tick();
    expect(asked).toHaveLength(2);
    answer({ approved: true, scope: 'session' });
    await again;
    // Every worker of the same orchestration: no new question.
    expect(await queue.request({ tool: 'shell', agent: 'w2', sessionId: 'op-9', runId: 'plan-a' })).toBe(true);
    expect(await queue.request({ tool: 'shell', agent: 'w3', orchestrationId: 'plan-a' })).toBe(true);
    const other = queue.request({ tool: 'shell', agent: 'w1', runId: 'plan-b' }); // another orchestration asks again
    await tick();
    expect(asked).toHaveLength(3);
    answer({ approved: false, scope: 'global' });
    expect(await other).toBe(false);
    expect(await queue.request({ tool: 'shell', agent: 'w4', runId: 'plan-c' })).toBe(false); // global: this process
    expect(await queue.request({ tool: 'shell', agent: 'w1', runId: 'plan-a' })).toBe(true); // the orchestration's decision wins
    await queue.forgetAll();
    void queue.request({ tool: 'shell', agent: 'w3', runId: 'plan-c' });
    await tick();
    expect(asked).toHaveLength(4);
  });

  it('keeps session decisions in the store it is given, per orchestration; global ones stay in the queue', async () => {
    const store = memoryStore();
    const answers: ApprovalDecision[] = [{ approved: true, scope: 'session' }, { approved: false, scope: 'session' }, { approved: true, scope: 'global' }];
    const queue = new ApprovalQueue({ handler: () => answers.shift()!, store });
    expect(await queue.request({ tool: 'shell', agent: 'w1', sessionId: 'op-3', runId: 'run-a' })).toBe(true);
    expect(await queue.request({ tool: 'shell', agent: 'w1', sessionId: 'op-3', runId: 'run-b' })).toBe(false); // another orchestration
    expect(await store.list('approvals/')).toEqual(['approvals/orchestration/run-a/shell', 'approvals/orchestration/run-b/shell']);
    // A second process of the same orchestration (same store) sees the decision without asking.
    const another = new ApprovalQueue({ handler: () => Promise.reject(new Error('not asked')), store });
    expect(await another.request({ tool: 'shell', agent: 'w2', sessionId: 'op-7', runId: 'run-a' })).toBe(true);
    await queue.forgetOrchestration('run-a');
    expect(await store.list('approvals/')).toEqual(['approvals/orchestration/run-b/shell']);
    expect(await queue.request({ tool: 'deploy', agent: 'w2' })).toBe(true);
    expect(await store.list('approvals/')).toEqual(['approvals/orchestration/run-b/shell']); // global: not in the shared store
    await expect(another.request({ tool: 'deploy', agent: 'w2' })).rejects.toThrow('not asked'); // nor in another process
  });

  it('approves read-only tools without asking, asks about dangerous ones every time, and says who decided', async () => {
    const { queue, asked, answer } = manual();
    const decided: string[] = [];
    queue.on('decided', (r, approved, source) => decided.push(`${r.tool}:${approved}:${source}`));
    expect(await queue.request({ tool: 'read_file', agent: 'w1', risk: 'read-only' })).toBe(true);
    expect(asked).toHaveLength(0);
    const first = queue.request({ tool: 'rm_rf', agent: 'w1', runId: 'r', risk: 'dangerous' });
    await tick();
    answer({ approved: true, scope: 'global' });
    expect(await first).toBe(true);
    const second = queue.request({ tool: 'rm_rf', agent: 'w1', runId: 'r', risk: 'dangerous' });
    await tick();
    expect(asked).toHaveLength(2); // never remembered
    answer({ approved: false, scope: 'session' });
    expect(await second).toBe(false);
    expect(decided).toEqual(['read_file:true:auto', 'rm_rf:true:handler', 'rm_rf:false:handler']);
    const strict = new ApprovalQueue({ handler: () => ({ approved: false }), autoApprove: [] });
    expect(await strict.request({ tool: 'read_file', agent: 'w1', risk: 'read-only' })).toBe(false);
    expect(() => new ApprovalQueue({ handler: () => ({ approved: true }), autoApprove: ['harmless' as never] })).toThrow(/autoApprove/);
    await expect(queue.request({ tool: 'x', agent: 'w1', risk: 'odd' as never })).rejects.toMatchObject({ code: 'invalid_option' });
  });

  it('rejects a decision that is not one, and keeps serving the queue', async () => {
    const replies: unknown[] = [undefined, { approved: true, scope: 'forever' }, { approved: true }];
    const queue = new ApprovalQueue({ handler: () => replies.shift() as ApprovalDecision });
    await expect(queue.request({ tool: 'a', agent: 'w1' })).rejects.toMatchObject({ code: 'invalid_option' });
    await expect(queue.request({ tool: 'a', agent: 'w1' })).rejects.toThrow(/scope/);
    expect(await queue.request({ tool: 'a', agent: 'w1' })).toBe(true);
  });

  it('rejects a waiting request when its signal aborts', async () => {
    const { queue, answer } = manual();
    const first = queue.request({ tool: 'a', agent: 'w1' });
    const controller = new AbortController();
    const second = queue.request({ tool: 'b', agent: 'w2' }, { signal: controller.signal });
    controller.abort();
    await expect(second).rejects.toMatchObject({ code: 'cancelled' });
    expect(queue.pending).toBe(1);
    answer({ approved: true });
    expect(await first).toBe(true);
  });
});

describe('approvals as a tool guardrail', () => {
  const deploy = (ran: string[]) => defineTool({ name: 'deploy', description: 'Deploy', parameters: z.object({ env: z.string() }), execute: ({ env }) => (ran.push(env), `deployed to ${env}`) });
  const callDeploy = (env: string) => ({ toolCalls: [{ name: 'deploy', arguments: { env } }] });

  it('asks for every tool call of everything under a guarded runnable, nested agents included', async () => {
    const ran: string[] = [];
    const asked: ApprovalRequest[] = [];
    const approvals = new ApprovalQueue({ handler: (r) => (asked.push(r), { approved: r.tool === 'ops' || (r.arguments as { env?: string }).env === 'staging' }) });
    // The lead calls an agent as a tool; that agent calls `deploy` twice. Only the lead's runnable is guarded.
    const ops = agent({ name: 'ops', tools: [deploy(ran)] });
    const lead = withGuardrails(agent({ name: 'lead', tools: [asTool(ops)] }), { tools: [approvals.guardrail({ risks: { deploy: 'dangerous' } })] });
    const adapter = scriptedAdapter({ replies: { lead: [{ toolCalls: [{ name: 'ops', arguments: { task: 'ship it' } }] }, 'done'], ops: [callDeploy('staging'), callDeploy('prod'), 'deployed'] } });
    const events: TroupeEvent[] = [];
    const result = await run(lead, 'Ship', { adapter, runId: 'r1', onEvent: (e) => events.push(e) });
    expect(result.output).toBe('done');
    expect(ran).toEqual(['staging']);
    // The lead's call of `ops` asked too (every tool, by default); `deploy` at its risk level.
    expect(asked.map((r) => [r.agent, r.tool, r.risk, r.runId])).toEqual([
      ['lead', 'ops', undefined, 'r1'],
      ['ops', 'deploy', 'dangerous', 'r1'],
      ['ops', 'deploy', 'dangerous', 'r1'],
    ]);
    expect(adapter.inputsOf('ops')[2]).toContain('Not approved: the use of `deploy` was denied.');
    const checked = events.filter((e): e is TroupeEvent<'guardrail.checked'> => e.type === 'guardrail.checked' && e.tool === 'deploy');
    expect(checked.map((e) => e.action)).toEqual(['allow', 'refuse']);
  });

  it('asks only about the tools it is given, and guard(tool) asks the same way for one tool', async () => {
    const ran: string[] = [];
    const asked: string[] = [];
    const approvals = new ApprovalQueue({ handler: (r) => (asked.push(r.tool), { approved: false }) });
    const look = defineTool({ name: 'look', description: 'Look', parameters: z.object({}), execute: () => 'seen' });
    const watched = withGuardrails(agent({ name: 'ops', tools: [deploy(ran), look] }), { tools: [approvals.guardrail({ tools: ['deploy'] })] });
    const adapter = scriptedAdapter({ replies: { ops: [{ toolCalls: [{ name: 'look', arguments: {} }] }, callDeploy('prod'), 'ok'] } });
    await run(watched, 'Go', { adapter });
    expect(asked).toEqual(['deploy']);
    const single = agent({ name: 'ops', tools: [approvals.guard(deploy(ran), { risk: 'writes' })] });
    const again = scriptedAdapter({ replies: { ops: [callDeploy('prod'), 'ok'] } });
    await run(single, 'Go', { adapter: again });
    expect(asked).toEqual(['deploy', 'deploy']);
    expect(again.inputsOf('ops')[1]).toContain('Not approved: the use of `deploy` was denied.');
    expect(ran).toEqual([]);
    expect(() => approvals.guardrail({ risks: { deploy: 'harmless' as never } })).toThrow('Expected `risks.deploy` to be one of "read-only", "writes", "dangerous", got "harmless"');
    expect(() => approvals.guardrail({ tool: ['deploy'] } as never)).toThrow('Unknown option `tool` of ApprovalQueue.guardrail; did you mean `tools`?');
  });
});
