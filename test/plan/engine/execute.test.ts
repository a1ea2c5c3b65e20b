import { describe, expect, it } from 'vitest';
import { agent } from '../../../src/patterns/agent.js';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { SimulatedClock, sleep } from '../../../src/core/clock.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import { defineRunnable } from '../../../src/core/runnable.js';
import { run } from '../../../src/core/run.js';
import { executePlan, planRunnable, type ChunkRunner } from '../../../src/plan/engine/execute.js';
import { inProcessExecutor, type Executor } from '../../../src/plan/engine/executor.js';
import { ApprovalQueue, type ApprovalRequest } from '../../../src/guardrails/approvals.js';
import { defineTool } from '../../../src/core/tools.js';
import { z } from 'zod';
import { resume } from '../../../src/core/resume.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import type { WorkspaceStrategy } from '../../../src/workspaces/types.js';
import { chunk, drive, planOf } from '../helpers.js';

type StatusEvent = TroupeEvent<'chunk.status'>;

function statusLog(events: TroupeEvent[]): string[] {
  return events.filter((e): e is StatusEvent => e.type === 'chunk.status').map((e) => `${e.sequenceIndex}:${e.status}`);
}

/** A runner whose chunks take `ms[i]` on the clock and record when they start. */
function timed(clock: SimulatedClock, ms: Record<number, number>, starts: Record<number, number> = {}): ChunkRunner {
  return async ({ chunk: c, signal }) => {
    starts[c.sequenceIndex] = clock.now();
    await sleep(clock, ms[c.sequenceIndex] ?? 1, signal);
    return `result of ${c.sequenceIndex}`;
  };
}

describe('executePlan', () => {
  it('runs chunks as agent sessions built from their roles, with dependency results in prompts', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'CodeAnalysis', match: 'Chunk 0', reply: 'cache holds listeners' },
        { agent: 'CodeAnalysis', match: 'Chunk 1', reply: 'session map never shrinks' },
        { agent: 'Synthesis', reply: 'two leaks found' },
      ],
    });
    const plan = planOf(chunk(0, [], { role: 'CodeAnalysis' }), chunk(1, [], { role: 'CodeAnalysis' }), chunk(2, [0, 1], { role: 'Synthesis', title: 'Consolidate' }));
    const outcome = await executePlan(plan, { adapter, roles: { Synthesis: { model: 'big-model', temperature: 0.5 } } });
    expect(outcome.status).toBe('completed');
    expect(outcome.results.map((r) => r.output)).toEqual(['cache holds listeners', 'session map never shrinks', 'two leaks found']);
    const [synthesis] = adapter.calls.filter((c) => c.agent === 'Synthesis');
    expect(synthesis!.text).toContain('## Results from dependencies');
    expect(synthesis!.text).toContain('### 0. Chunk A (CodeAnalysis)\n\ncache holds listeners');
    expect(synthesis!.text).toContain('### 1. Chunk B (CodeAnalysis)\n\nsession map never shrinks');
    expect(synthesis!.spec).toMatchObject({ model: 'big-model', temperature: 0.5, workspace: process.cwd() });
    expect(synthesis!.spec.system).toContain('consolidate');
    expect(outcome.stats).toMatchObject({ total: 3, completed: 3, failed: 0 });
    expect(outcome.usage.turns).toBe(3);
  });

  it('emits one chunk.status event per transition with id, title, role and attempt', async () => {
    const events: TroupeEvent[] = [];
    await executePlan(planOf(chunk(0), chunk(1, [0])), { runChunk: async () => 'ok', onEvent: (e) => events.push(e) });
    expect(statusLog(events)).toEqual(['0:queued', '1:waiting-for-dependencies', '0:running', '0:completed', '1:queued', '1:running', '1:completed']);
    const first = events.find((e): e is StatusEvent => e.type === 'chunk.status')!;
    expect(first).toMatchObject({ chunkId: '0', title: 'Chunk A', role: 'Generic', attempt: 0, previous: 'pending' });
  });

  it('retries with the previous error in the prompt, then succeeds', async () => {
    const prompts: string[] = [];
    const events: TroupeEvent[] = [];
    const outcome = await executePlan(planOf(chunk(0)), {
      retry: { delayMs: 0 },
      onEvent: (e) => events.push(e),
      runChunk: async ({ prompt, attempt }) => {
        prompts.push(prompt);
        if (attempt === 1) throw new Error('compiler exploded');
        return 'fixed';
      },
    });
    expect(outcome.results[0]).toMatchObject({ status: 'completed', attempts: 2, output: 'fixed' });
    expect(prompts[0]).not.toContain('Previous attempt failed');
    expect(prompts[1]).toContain('## Previous attempt failed');
    expect(prompts[1]).toContain('compiler exploded');
    expect(statusLog(events)).toEqual(['0:queued', '0:running', '0:retrying', '0:queued', '0:running', '0:completed']);
    expect(outcome.stats.retried).toBe(1);
  });

  it('waits delayMs on the clock between attempts', async () => {
    const clock = new SimulatedClock();
    const starts: number[] = [];
    const done = executePlan(planOf(chunk(0)), {
      clock,
      retry: { delayMs: 500, reprompt: false },
      runChunk: async ({ attempt, prompt }) => {
        starts.push(clock.now());
        if (attempt === 1) throw new Error('flaky');
        expect(prompt).not.toContain('flaky');
        return 'ok';
      },
    });
    await drive(clock, done);
    expect(starts).toEqual([0, 500]);
  });

  it('marks a chunk Failed when retries run out and skips its dependents', async () => {
    const ran: number[] = [];
    const outcome = await executePlan(planOf(chunk(0), chunk(1, [0]), chunk(2, [1]), chunk(3)), {
      retry: { maxRetries: 1, delayMs: 0 },
      runChunk: async ({ chunk: c }) => {
        ran.push(c.sequenceIndex);
        if (c.sequenceIndex === 0) throw new Error('always broken');
        return 'ok';
      },
    });
    expect(outcome.results.map((r) => r.status)).toEqual(['failed', 'skipped', 'skipped', 'completed']);
    expect(outcome.results[0]).toMatchObject({ attempts: 2, error: 'always broken' });
    expect(outcome.results[1]!.error).toContain('dependency 0');
    expect(ran.sort()).toEqual([0, 0, 3]);
    expect(outcome.status).toBe('failed');
  });

  it('stops at the abort threshold: running chunks are cancelled, the rest cancelled, partial results aggregated', async () => {
    const clock = new SimulatedClock();
    let sawAbort = false;
    const adapter = scriptedAdapter({ rules: [{ agent: 'synthesis', reply: 'partial summary' }] });
    const plan = planOf(chunk(0), chunk(1), chunk(2), chunk(3), chunk(4, [3]));
    const done = executePlan(plan, {
      clock,
      adapter,
      maxParallel: 3,
      abortThreshold: 2,
      aggregate: true,
      retry: { maxRetries: 0 },
      runChunk: async ({ chunk: c, signal }) => {
        if (c.sequenceIndex === 0 || c.sequenceIndex === 1) {
          await sleep(clock, 10 * (c.sequenceIndex + 1), signal);
          throw new Error('broken');
        }
        try {
          await sleep(clock, 1000, signal);
        } catch (error) {
          sawAbort = true;
          throw error;
        }
        return 'late';
      },
    });
    const outcome = await drive(clock, done);
    expect(outcome.status).toBe('failed');
    expect(outcome.reason).toBe('abort-threshold');
    expect(outcome.results.map((r) => r.status)).toEqual(['failed', 'failed', 'cancelled', 'cancelled', 'cancelled']);
    expect(sawAbort).toBe(true);
    expect(outcome.output).toBe('partial summary');
    expect(adapter.inputsOf('synthesis')[0]).toContain('Status: cancelled');
    expect(outcome.stats).toMatchObject({ failed: 2, cancelled: 3 });
  });

  it('lets running chunks finish at the abort threshold when asked', async () => {
    const clock = new SimulatedClock();
    const done = executePlan(planOf(chunk(0), chunk(1), chunk(2), chunk(3)), {
      clock,
      maxParallel: 2,
      abortThreshold: 1,
      onAbortThreshold: 'finish-running',
      retry: { maxRetries: 0 },
      runChunk: async ({ chunk: c, signal }) => {
        await sleep(clock, c.sequenceIndex === 0 ? 5 : 50, signal);
        if (c.sequenceIndex === 0) throw new Error('broken');
        return 'finished anyway';
      },
    });
    const outcome = await drive(clock, done);
    expect(outcome.results.map((r) => r.status)).toEqual(['failed', 'completed', 'cancelled', 'cancelled']);
  });

  it('times out an attempt on the injected clock', async () => {
    const clock = new SimulatedClock();
    const done = executePlan(planOf(chunk(0)), {
      clock,
      chunkTimeoutMs: 100,
      retry: { maxRetries: 1, delayMs: 0 },
      runChunk: async ({ signal }) => {
        await sleep(clock, 10_000, signal);
        return 'never';
      },
    });
    const outcome = await drive(clock, done);
    expect(outcome.results[0]).toMatchObject({ status: 'failed', attempts: 2 });
    expect(outcome.results[0]!.error).toMatch(/timed out after 100 ms/);
    expect(clock.now()).toBeLessThan(1000);
  });

  it('on cancellation starts nothing new and running chunks see the signal', async () => {
    const clock = new SimulatedClock();
    const controller = new AbortController();
    const started: number[] = [];
    const aborted: number[] = [];
    const events: TroupeEvent[] = [];
    const done = executePlan(planOf(chunk(0), chunk(1), chunk(2), chunk(3, [0])), {
      clock,
      maxParallel: 2,
      signal: controller.signal,
      onEvent: (e) => events.push(e),
      runChunk: async ({ chunk: c, signal }) => {
        started.push(c.sequenceIndex);
        signal.addEventListener('abort', () => aborted.push(c.sequenceIndex));
        await sleep(clock, 100, signal);
        return 'ok';
      },
    });
    await clock.advance(10);
    controller.abort();
    await expect(drive(clock, done)).rejects.toMatchObject({ code: 'cancelled' });
    await clock.advance(500);
    expect(started).toEqual([0, 1]);
    expect(aborted).toEqual([0, 1]);
    const final = new Map(events.filter((e): e is StatusEvent => e.type === 'chunk.status').map((e) => [e.sequenceIndex, e.status]));
    expect([...final.values()]).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled']);
  });

  it('starts a chunk as soon as its dependencies succeed, not when its stage ends', async () => {
    const clock = new SimulatedClock();
    const starts: Record<number, number> = {};
    // Stages: [0, 1], [2, 3]. Chunk 2 needs only the fast chunk 0.
    const plan = planOf(chunk(0), chunk(1), chunk(2, [0]), chunk(3, [1]));
    await drive(clock, executePlan(plan, { clock, maxParallel: 4, runChunk: timed(clock, { 0: 10, 1: 100, 2: 10, 3: 10 }, starts) }));
    expect(starts[2]).toBe(10);
    expect(starts[3]).toBe(100);
  });

  it('starts the ready chunk with the highest remaining critical path first', async () => {
    const clock = new SimulatedClock();
    const order: number[] = [];
    // Remaining critical paths (Medium 2, High 3): 3 -> 4 -> 5 gives 6, 4, 2; chunk 2 is 3; chunks 0 and 1 are 2.
    const plan = planOf(chunk(0), chunk(1), chunk(2, [], { complexity: 'High' }), chunk(3), chunk(4, [3]), chunk(5, [4]));
    const runChunk: ChunkRunner = async ({ chunk: c }) => {
      order.push(c.sequenceIndex);
      return 'ok';
    };
    await drive(clock, executePlan(plan, { clock, maxParallel: 1, runChunk }));
    expect(order).toEqual([3, 4, 2, 0, 1, 5]);
  });

  it('prepares, merges and always cleans up a workspace per chunk', async () => {
    const log: string[] = [];
    const workspace: WorkspaceStrategy = {
      kind: 'test',
      isAvailable: async () => true,
      prepare: async (c) => {
        log.push(`prepare ${c.id}`);
        return { kind: 'test', path: `${c.baseDir}/ws-${c.id}`, chunkId: c.id, baseDir: c.baseDir };
      },
      merge: async (ws) => {
        log.push(`merge ${ws.chunkId}`);
        return { status: 'merged', conflicts: [] };
      },
      cleanup: async (ws) => {
        log.push(`cleanup ${ws.chunkId}`);
      },
    };
    const paths: string[] = [];
    const outcome = await executePlan(planOf(chunk(0), chunk(1, [0])), {
      workspace,
      baseDir: '/repo',
      retry: { maxRetries: 0 },
      runChunk: async ({ chunk: c, workspace: ws }) => {
        paths.push(ws.path);
        if (c.sequenceIndex === 1) throw new Error('boom');
        return 'ok';
      },
    });
    expect(paths).toEqual(['/repo/ws-0', '/repo/ws-1']);
    expect(log).toEqual(['prepare 0', 'merge 0', 'cleanup 0', 'prepare 1', 'cleanup 1']);
    expect(outcome.results[1]!.status).toBe('failed');
  });

  it('applies instructions added while running to chunks not yet started, and records them', async () => {
    const instructions: string[] = [];
    const prompts: Record<number, string> = {};
    const outcome = await executePlan(planOf(chunk(0), chunk(1, [0])), {
      instructions: () => instructions,
      runChunk: async ({ chunk: c, prompt }) => {
        prompts[c.sequenceIndex] = prompt;
        if (c.sequenceIndex === 0) instructions.push('Use tabs, not spaces');
        return 'ok';
      },
    });
    expect(prompts[0]).not.toContain('Use tabs');
    expect(prompts[1]).toContain('## Additional instructions from the user\n\n- Use tabs, not spaces');
    expect(outcome.instructions).toEqual(['Use tabs, not spaces']);
  });

  it('checkpoints every chunk that succeeds in the run store; a plan stopped after 3 chunks resumes and runs only the other 3', async () => {
    const plan = planOf(chunk(0), chunk(1, [0]), chunk(2, [1]), chunk(3, [2]), chunk(4, [3]), chunk(5, [4]));
    const store = memoryStore();
    const controller = new AbortController();
    const ran: number[] = [];
    const runChunk: ChunkRunner = async ({ chunk: c, prompt }) => {
      ran.push(c.sequenceIndex);
      return `out ${c.sequenceIndex} <${prompt.length}>`;
    };
    let succeeded = 0;
    const onEvent = (e: TroupeEvent) => void (e.type === 'chunk.status' && e.status === 'completed' && ++succeeded === 3 && controller.abort());
    await expect(executePlan(plan, { maxParallel: 1, signal: controller.signal, runChunk, store, runId: 'six', onEvent })).rejects.toMatchObject({ code: 'cancelled' });
    expect(ran).toEqual([0, 1, 2]);

    ran.length = 0;
    const prompts: string[] = [];
    const resumed = await resume(
      planRunnable(plan, {
        runChunk: async (input) => {
          prompts.push(input.prompt);
          return runChunk(input);
        },
      }),
      'six',
      { store },
    );
    expect(ran).toEqual([3, 4, 5]);
    expect(prompts[0]).toContain(resumed.results[2]!.output!);
    expect(resumed.results[2]!.output).toMatch(/^out 2 </);
    expect(resumed.results.map((r) => r.status)).toEqual(Array(6).fill('completed'));
  });

  it('nests as a runnable and rolls usage up through the op tree', async () => {
    const adapter = scriptedAdapter({ fallback: { text: 'done', usage: { inputTokens: 10, outputTokens: 5 } } });
    const plan = planOf(chunk(0), chunk(1, [0]));
    const outer = defineRunnable({
      name: 'outer',
      kind: 'custom',
      async run(input, ctx) {
        const first = await planRunnable(plan).run(input, ctx);
        const second = await executePlan(plan, { ctx, planId: 'again' });
        return { output: `${first.output}|${second.results.length}`, agent: 'outer', status: 'completed' };
      },
    });
    const result = await run(outer, 'task', { adapter });
    expect(result.usage).toMatchObject({ inputTokens: 40, outputTokens: 20, turns: 4 });
    const plans = result.trace.children[0]!.children;
    expect(plans.map((p) => [p.kind, p.name])).toEqual([['plan', 'plan'], ['plan', 'again']]);
    expect(plans[0]!.children.map((c) => [c.kind, c.agent])).toEqual([['agent', 'Generic'], ['agent', 'Generic']]);
  });

  it('dispatches through the executor given; a p-limit pool is shared between plans', async () => {
    const clock = new SimulatedClock();
    let active = 0;
    let peak = 0;
    const runChunk: ChunkRunner = async ({ signal }) => {
      peak = Math.max(peak, ++active);
      await sleep(clock, 10, signal);
      active--;
      return 'ok';
    };
    const pool = inProcessExecutor({ maxParallel: 2 });
    const plan = planOf(chunk(0), chunk(1), chunk(2), chunk(3));
    const both = Promise.all([executePlan(plan, { clock, executor: pool, runChunk }), executePlan(plan, { clock, executor: pool, runChunk })]);
    const [a, b] = await drive(clock, both);
    expect(peak).toBe(2);
    expect([...a.results, ...b.results].every((r) => r.status === 'completed')).toBe(true);

    const jobs: string[] = [];
    const remote: Executor = { kind: 'remote', maxParallel: 1, dispatch: async (job) => (jobs.push(`${job.chunk.sequenceIndex}#${job.attempt}:${job.prompt.split('\n')[0]}`), 'remote ok') };
    const outcome = await executePlan(planOf(chunk(0)), { executor: remote });
    expect(jobs).toEqual(['0#1:# Chunk 0: Chunk A']);
    expect(outcome.output).toBe('remote ok');
  });

  it('asks the approval queue once per plan for a session decision, whatever the number of workers', async () => {
    const written: string[] = [];
    const writeFile = defineTool({
      name: 'write_file',
      description: 'Write a file',
      parameters: z.object({ path: z.string() }),
      execute: ({ path }) => (written.push(path), 'written'),
    });
    const asked: ApprovalRequest[] = [];
    const approvals = new ApprovalQueue({ handler: (request) => (asked.push(request), { approved: true, scope: 'session' }) });
    const call = (path: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path } }] });
    const adapter = scriptedAdapter({
      replies: { Implementation: [call('a.ts'), 'fixed'], Testing: [call('a.test.ts'), call('b.test.ts'), 'tested'], Generic: [call('c.md'), 'noted'] },
    });
    const plan = planOf(chunk(0, [], { role: 'Implementation' }), chunk(1, [], { role: 'Testing' }), chunk(2, [0, 1], { role: 'Generic' }));
    const outcome = await executePlan(plan, { adapter, tools: [writeFile], approvals, runId: 'plan-run-1' });
    expect(outcome.results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(asked).toHaveLength(1); // three workers, one orchestration
    expect(asked[0]).toMatchObject({ tool: 'write_file', runId: 'plan-run-1' });
    expect(written.sort()).toEqual(['a.test.ts', 'a.ts', 'b.test.ts', 'c.md']);
    // Another execution is another orchestration: asked again.
    await executePlan(planOf(chunk(0, [], { role: 'Implementation' })), { adapter: scriptedAdapter({ replies: { Implementation: [call('d.ts'), 'done'] } }), tools: [writeFile], approvals, runId: 'plan-run-2' });
    expect(asked).toHaveLength(2);
    await expect(executePlan(plan, { adapter, approvals: {} as ApprovalQueue })).rejects.toThrow('Expected `approvals` to be an ApprovalQueue');
    await expect(executePlan(plan, { adapter, tools: ['write_file'] as never })).rejects.toThrow('Expected `tools[0]` to be a tool definition (a `name` and `execute`), got "write_file" (string)');
  });

  it('asks the approval queue for the tools a runChunk runs too: approvals are a tool guardrail on every attempt', async () => {
    const ran: string[] = [];
    const deploy = defineTool({ name: 'deploy', description: 'Deploy', parameters: z.object({ env: z.string() }), execute: ({ env }) => (ran.push(env), 'deployed') });
    const asked: ApprovalRequest[] = [];
    const approvals = new ApprovalQueue({ handler: (r) => (asked.push(r), { approved: (r.arguments as { env: string }).env !== 'prod' }) });
    // The runner builds its own agent with its own tool: nothing of the plan's `tools`, no role agent.
    const ops = agent({ name: 'ops', tools: [deploy] });
    const runChunk: ChunkRunner = async ({ ctx, prompt }) => (await ops.run(prompt, ctx)).output;
    const call = (env: string) => ({ toolCalls: [{ name: 'deploy', arguments: { env } }] });
    const adapter = scriptedAdapter({ replies: { ops: [call('staging'), call('prod'), 'shipped'] } });
    const outcome = await executePlan(planOf(chunk(0)), { adapter, runChunk, approvals, toolRisks: {}, runId: 'ship-1' });
    expect(outcome.results[0]).toMatchObject({ status: 'completed', output: 'shipped' });
    expect(asked.map((r) => [r.agent, r.tool, (r.arguments as { env: string }).env, r.runId])).toEqual([
      ['ops', 'deploy', 'staging', 'ship-1'],
      ['ops', 'deploy', 'prod', 'ship-1'],
    ]);
    expect(ran).toEqual(['staging']);
    expect(adapter.inputsOf('ops')[2]).toContain('Not approved: the use of `deploy` was denied.');
  });

  it('does not ask about its own post_message tool', async () => {
    const asked: string[] = [];
    const approvals = new ApprovalQueue({ handler: (r) => (asked.push(r.tool), { approved: true }), autoApprove: [] });
    const adapter = scriptedAdapter({ replies: { Generic: [{ toolCalls: [{ name: 'post_message', arguments: { to: 'all', text: 'found it' } }] }, 'done'] } });
    const outcome = await executePlan(planOf(chunk(0)), { adapter, approvals, workerMessages: true });
    expect(outcome.messages?.map((m) => m.text)).toEqual(['found it']);
    expect(asked).toEqual([]);
  });

  it('gives each role only the tools it may use, approves read-only tools without asking and asks about dangerous ones every call', async () => {
    const ran: string[] = [];
    const tool = (name: string) => defineTool({ name, description: name, parameters: z.object({ path: z.string() }), execute: ({ path }) => (ran.push(`${name} ${path}`), 'ok') });
    const [readFile, writeFile, deleteFile] = [tool('read_file'), tool('write_file'), tool('delete_file')];
    const asked: string[] = [];
    const approvals = new ApprovalQueue({ handler: (r) => (asked.push(`${r.tool}:${r.risk}`), { approved: r.tool !== 'delete_file' || asked.length < 3, scope: 'session' }) });
    const call = (name: string, path: string) => ({ toolCalls: [{ name, arguments: { path } }] });
    const adapter = scriptedAdapter({
      replies: {
        CodeAnalysis: [call('read_file', 'a.ts'), call('write_file', 'a.ts'), 'read it'],
        Implementation: [call('read_file', 'a.ts'), call('write_file', 'a.ts'), call('delete_file', 'old.ts'), call('delete_file', 'older.ts'), 'changed it'],
      },
    });
    const plan = planOf(chunk(0, [], { role: 'CodeAnalysis' }), chunk(1, [0], { role: 'Implementation' }));
    const outcome = await executePlan(plan, {
      adapter,
      tools: [readFile, writeFile, deleteFile],
      toolRisks: { read_file: 'read-only', delete_file: 'dangerous' },
      roles: { CodeAnalysis: { tools: ['read_file'] } },
      approvals,
    });
    // CodeAnalysis has no write_file: its call is an unknown tool and never reaches the queue.
    expect(adapter.inputsOf('CodeAnalysis')[2]).toMatch(/unknown tool "write_file"/);
    expect(asked).toEqual(['write_file:undefined', 'delete_file:dangerous', 'delete_file:dangerous']);
    expect(ran).toEqual(['read_file a.ts', 'read_file a.ts', 'write_file a.ts', 'delete_file old.ts']);
    const [analysis, implementation] = outcome.results;
    expect(analysis!.toolCalls).toEqual([{ name: 'read_file', arguments: { path: 'a.ts' } }]);
    expect(implementation!.toolCalls!.map((t) => `${t.name}${t.isError ? ' (refused)' : ''}`)).toEqual(['read_file', 'write_file', 'delete_file', 'delete_file (refused)']);
    expect(implementation!.usage).toMatchObject({ turns: 5 });
    expect(analysis!.usage).toMatchObject({ turns: 3 });
    expect(() => planRunnable(plan, { tools: [deleteFile], toolRisks: { delete_file: 'dangerous' } })).toThrow(/dangerous: give an approval queue/);
    expect(() => planRunnable(plan, { tools: [readFile], roles: { Testing: { tools: ['run_tests'] } } })).toThrow(/roles.Testing.tools` names tool "run_tests"/);
    expect(() => planRunnable(plan, { tools: [readFile], toolRisks: { read_file: 'harmless' as never } })).toThrow(/Expected `toolRisks.read_file` to be one of "read-only", "writes", "dangerous", got "harmless"/);
  });

  it('rejects invalid plans and options with clear messages', async () => {
    expect(() => planRunnable(planOf(chunk(0, [0])))).toThrow(/depends on itself/);
    await expect(executePlan(planOf(chunk(0), chunk(1, [0, 2])))).rejects.toMatchObject({ code: 'invalid_graph' });
    expect(() => planRunnable(planOf(chunk(0)), { maxParallel: -1 })).toThrow('Expected `maxParallel` to be a positive integer, got -1 (number)');
    expect(() => planRunnable(planOf(chunk(0)), { abortThreshold: 0 })).toThrow(/abortThreshold/);
  });
});
