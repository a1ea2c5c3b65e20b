// A2A against the real thing, each side in its own process: the A2A
// SDK's own client against `troupe serve --a2a` (a child process), and
// troupe's A2A worker against an agent built with the SDK alone
// (test/fixtures/a2a/sdk-agent.mjs, a child process): a streamed task, an
// input-required round trip, a cancel that reaches the other side, a
// remote that dies mid-task, cards that lie; and a remote agent in every
// pattern.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientFactory } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { CancelledError } from '../../../src/core/errors.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { walk } from '../../../src/core/ops.js';
import { run } from '../../../src/core/run.js';
import { a2aAdapter, a2aAgent, RemoteAgentError } from '../../../src/integrations/a2a/index.js';
import { answerRequest } from '../../../src/integrations/http/requests.js';
import { advisors } from '../../../src/patterns/advisors.js';
import { agent } from '../../../src/patterns/agent.js';
import { handoff } from '../../../src/patterns/handoff.js';
import { orchestrate } from '../../../src/patterns/orchestrate.js';
import { router } from '../../../src/patterns/router.js';
import { planRunnable } from '../../../src/plan/engine/execute.js';
import { sendParams, startSdkAgent, startTroupeA2A, userMessage } from '../../helpers/a2a.js';

const SLOW = { timeout: 60_000 };
const work = mkdtempSync(join(tmpdir(), 'troupe-a2a-interop-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const TASK = { working: 2, completed: 3, canceled: 5, inputRequired: 6 } as const;
const textOf = (parts: ReadonlyArray<{ content?: { $case: string; value: unknown } | undefined }> = []) => parts.map((p) => (p.content?.$case === 'text' ? String(p.content.value) : '')).join('');

describe('the A2A SDK client against troupe serve --a2a, in its own process', () => {
  let served: Awaited<ReturnType<typeof startTroupeA2A>>;
  beforeAll(async () => {
    served = await startTroupeA2A();
  }, 60_000);
  afterAll(async () => {
    await served?.stop();
    // SIGTERM cancels what runs and exits 0.
    expect(await served.exited).toBe(0);
  });
  const client = (name: string) => new ClientFactory().createFromUrl(served.agents[name]!);

  it('serves one agent per entry agent, each with a card made from its agent files: name, description, the skills of its team, streaming', SLOW, async () => {
    expect(Object.keys(served.agents).sort()).toEqual(['clerk', 'review-panel', 'slowpoke']);
    const card = await (await client('review-panel')).getAgentCard();
    expect(card.name).toBe('review-panel');
    expect(card.description).toBe('Reviews a change with a security reviewer and a style reviewer, and gives one verdict');
    expect(card.skills.map((s) => [s.id, s.description])).toEqual([
      ['review-panel', 'Reviews a change with a security reviewer and a style reviewer, and gives one verdict'],
      ['security', 'Looks for vulnerabilities in a change'],
      ['style', 'Checks naming and readability'],
    ]);
    expect(card.skills[0]!.tags).toContain('advisors');
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.capabilities?.pushNotifications).toBe(false);
    expect(card.supportedInterfaces.map((i) => [i.url, i.protocolBinding, i.protocolVersion])).toEqual([[served.agents['review-panel'], 'JSONRPC', '1.0']]);
  });

  it('streams a task: the task, working updates carrying the run\'s events, the output as an artifact, completed; GetTask has it all', SLOW, async () => {
    const panel = await client('review-panel');
    const updates: Array<{ kind: string; state?: number; event?: string; text?: string }> = [];
    let taskId = '';
    for await (const update of panel.sendMessageStream(sendParams(userMessage('Review PR 42: add GET /export')))) {
      const p = update.payload!;
      if (p.$case === 'task') taskId = p.value.id;
      if (p.$case === 'statusUpdate') updates.push({ kind: 'status', state: p.value.status?.state, event: (p.value.metadata?.['troupe.event'] as { type?: string } | undefined)?.type });
      if (p.$case === 'artifactUpdate') updates.push({ kind: 'artifact', text: textOf(p.value.artifact?.parts) });
    }
    expect(taskId).not.toBe('');
    const events = updates.map((u) => u.event).filter(Boolean);
    // The advisors ran before the lead: their ops are on the stream.
    expect(events).toContain('op.started');
    expect(events.filter((e) => e === 'agent.completed').length).toBe(3);
    const artifact = updates.find((u) => u.kind === 'artifact')!;
    expect(artifact.text).toBe('review-panel handled: Review PR 42: add GET /export');
    expect(updates.at(-1)).toMatchObject({ kind: 'status', state: TASK.completed });
    const task = await panel.getTask({ tenant: '', id: taskId });
    expect(task.status?.state).toBe(TASK.completed);
    expect(textOf(task.artifacts[0]?.parts)).toBe(artifact.text);
    expect(task.history.map((m) => [m.role, textOf(m.parts)])).toEqual([
      [1, 'Review PR 42: add GET /export'],
      [2, artifact.text],
    ]);
    expect(task.metadata?.['troupe.usage']).toMatchObject({ turns: 3 });
    expect((await panel.getTask({ tenant: '', id: taskId, historyLength: 1 })).history.length).toBe(1);
  });

  it('an input-required round trip: the run asks a person, the task waits, the next message answers and the task completes', SLOW, async () => {
    const clerk = await client('clerk');
    const first = await clerk.sendMessage(sendParams(userMessage('Check the branch')));
    expect('id' in first).toBe(true);
    const task = first as Extract<typeof first, { id: string }>;
    expect(task.status?.state).toBe(TASK.inputRequired);
    expect(textOf(task.status?.message?.parts)).toBe('Which branch should I check?');
    const request = task.status?.message?.parts.find((p) => p.content?.$case === 'data')?.content?.value as { troupe: { kind: string; requestId: string } };
    expect(request.troupe.kind).toBe('question');
    // An answer of the wrong shape is refused and changes nothing.
    await expect(clerk.sendMessage(sendParams(userMessage('release', { taskId: task.id }, { approved: true })))).rejects.toThrow(/does not answer the question request/);
    const answered = await clerk.sendMessage(sendParams(userMessage('release', { taskId: task.id })));
    const done = answered as typeof task;
    expect(done.status?.state).toBe(TASK.completed);
    expect(textOf(done.artifacts[0]?.parts)).toBe('Checked the release branch: all green.');
    expect(done.history.map((m) => textOf(m.parts))).toEqual(['Check the branch', 'Which branch should I check?', 'release', 'Checked the release branch: all green.']);
    // The task has ended: a further message is refused.
    await expect(clerk.sendMessage(sendParams(userMessage('again', { taskId: task.id })))).rejects.toThrow(/has ended \(completed\)/);
  });

  it('a cancel reaches the run: CancelTask answers canceled once the run stopped, and the task stays canceled', SLOW, async () => {
    const slowpoke = await client('slowpoke');
    const started = (await slowpoke.sendMessage(sendParams(userMessage('Take your time'), { returnImmediately: true }))) as { id: string; status?: { state: number } };
    expect(started.status?.state).toBe(TASK.working);
    const cancelled = await slowpoke.cancelTask({ tenant: '', id: started.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TASK.canceled);
    const task = await slowpoke.getTask({ tenant: '', id: started.id });
    expect(task.status?.state).toBe(TASK.canceled);
    expect(textOf(task.status?.message?.parts)).toMatch(/Cancelled by the A2A client/);
    await expect(slowpoke.cancelTask({ tenant: '', id: started.id, metadata: undefined })).rejects.toThrow(/has ended \(canceled\)/);
  });
});

describe('troupe serve --a2a --token', () => {
  it('requires the bearer token its card declares', SLOW, async () => {
    const served = await startTroupeA2A(['--token', 's3cret']);
    try {
      const url = served.agents['review-panel']!;
      const card = (await (await fetch(`${url}.well-known/agent-card.json`)).json()) as { securitySchemes: unknown; securityRequirements: unknown };
      expect(card.securitySchemes).toEqual({ bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } });
      expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} });
      expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(401);
      const ok = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer s3cret' }, body });
      expect(await ok.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { tasks: [] } });
      // The worker sends it with `headers`, and is refused without.
      await expect(run(a2aAgent(url), 'hi')).rejects.toMatchObject({ reason: 'auth_required' });
      const answer = await run(a2aAgent(url, { headers: { authorization: 'Bearer s3cret' } }), 'Review PR 7');
      expect(answer.output).toBe('review-panel handled: Review PR 7');
    } finally {
      await served.stop();
    }
  });
});

describe('troupe\'s A2A worker against an agent built with the A2A SDK, in its own process', () => {
  let sdk: Awaited<ReturnType<typeof startSdkAgent>>;
  beforeAll(async () => {
    sdk = await startSdkAgent(join(work, 'sdk.log'));
  }, 60_000);
  afterAll(() => sdk?.stop());

  it('a streamed task: its updates and artifact chunks are a2a.* events in the run\'s op, the artifacts the output, the usage it reports counted', SLOW, async () => {
    const events: TroupeEvent[] = [];
    const reviewer = a2aAgent(sdk.url, { skill: 'review' });
    const result = await run(reviewer, 'stream the diff of PR 42', { onEvent: (e) => events.push(e) });
    expect(result.output).toBe('Looks good.');
    expect(result.agent).toBe(new URL(sdk.url).host);
    expect(result.usage).toMatchObject({ inputTokens: 12, outputTokens: 5, turns: 1 });
    const op = result.trace.children[0]!;
    expect([op.kind, op.name, op.status]).toEqual(['a2a', new URL(sdk.url).host, 'completed']);
    const a2a = events.filter((e) => e.type.startsWith('a2a.'));
    expect(a2a.every((e) => e.opId === op.id)).toBe(true);
    expect(a2a.map((e) => (e.type === 'a2a.status' ? `${e.type} ${e.state}${e.text ? ` ${e.text}` : ''}` : e.type === 'a2a.artifact' ? `${e.type} ${e.text}${e.append ? ' (append)' : ''}` : e.type))).toEqual([
      'a2a.card',
      'a2a.status working',
      'a2a.status working reading the change',
      'a2a.artifact Looks ',
      'a2a.artifact good. (append)',
      'a2a.status completed',
    ]);
    expect(events.find((e) => e.type === 'a2a.card')).toMatchObject({ name: 'sdk-reviewer', skills: ['review'], binding: 'JSONRPC', streaming: true });
  });

  it('an input-required round trip: the remote\'s question reaches a person through the run\'s store, and the answer goes back as the next message', SLOW, async () => {
    const store = memoryStore();
    const asked: Array<TroupeEvent<'input.requested'>> = [];
    const result = await run(a2aAgent(sdk.url), 'ask which branch to merge', {
      store,
      onEvent: (e) => {
        if (e.type !== 'input.requested') return;
        asked.push(e);
        void answerRequest(e.runId, e.requestId, { text: 'release-2' }, { store });
      },
    });
    expect(asked.map((e) => [e.kind, e.prompt])).toEqual([['question', `${new URL(sdk.url).host} asks: Which branch?`]]);
    expect(result.output).toBe('merged into release-2');
    const calls = sdk.log().filter((c) => c.text === 'release-2');
    expect(calls).toEqual([expect.objectContaining({ call: 'execute', followUp: true })]);
    // Without a store (and without `answer`), nothing can answer: a typed error.
    await expect(run(a2aAgent(sdk.url), 'ask again')).rejects.toMatchObject({ code: 'remote_agent', reason: 'input_required' });
  });

  it('a cancel reaches the other side: aborting the run cancels the remote task, whose executor stops', SLOW, async () => {
    const controller = new AbortController();
    const events: TroupeEvent[] = [];
    const running = run(a2aAgent(sdk.url), 'slow review please', { signal: controller.signal, onEvent: (e) => events.push(e) });
    await until(() => events.some((e) => e.type === 'a2a.status' && e.text === 'working slowly'));
    controller.abort();
    await expect(running).rejects.toBeInstanceOf(CancelledError);
    const taskId = (events.find((e) => e.type === 'a2a.status') as TroupeEvent<'a2a.status'>).taskId;
    expect(events.find((e) => e.type === 'a2a.cancelled')).toMatchObject({ taskId, acknowledged: true });
    expect(sdk.log().filter((c) => c.call === 'cancelTask').map((c) => c.taskId)).toEqual([taskId]);
    expect(events.find((e) => e.type === 'op.completed' && e.kind === 'a2a')).toMatchObject({ status: 'cancelled' });
  });

  it('a remote that dies mid-task: a typed error (connection_lost), every op of the run closed, the agent gone', SLOW, async () => {
    const dying = await startSdkAgent(join(work, 'dying.log'));
    try {
      const events: TroupeEvent[] = [];
      const error = await run(a2aAgent(dying.url), 'die halfway', { onEvent: (e) => events.push(e) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RemoteAgentError);
      expect(error).toMatchObject({ code: 'remote_agent', reason: 'connection_lost' });
      expect((error as Error).message).toMatch(/was lost while task \S+ was working, and the agent no longer answers/);
      expect(await dying.exited).toBe(3);
      // Every op the run opened is closed (the remote's, failed), and the run says why it failed.
      const opened = events.filter((e) => e.type === 'op.started').map((e) => e.opId);
      const closed = events.filter((e): e is TroupeEvent<'op.completed'> => e.type === 'op.completed');
      expect(closed.map((e) => e.opId).sort()).toEqual([...opened].sort());
      expect(closed.find((e) => e.kind === 'a2a')).toMatchObject({ status: 'failed', code: 'remote_agent' });
      expect(events.at(-1)).toMatchObject({ type: 'run.failed', code: 'remote_agent' });
      // The agent is gone: the next run is refused at its card.
      await expect(run(a2aAgent(dying.url), 'again')).rejects.toMatchObject({ reason: 'card_unreachable' });
    } finally {
      await dying.stop();
    }
  });

  it('cards that lie are refused before anything is sent: a skill it lacks, an endpoint on another origin, an endpoint where no A2A answers', SLOW, async () => {
    for (const [lie, reason, message] of [
      ['skills', 'card_mismatch', /does not list the skill "review" \(its skills: translate\)/],
      ['endpoint', 'card_mismatch', /names its endpoint on another origin \(http:\/\/127\.0\.0\.1:\d+, the card is on http:\/\/127\.0\.0\.1:\d+\); pass `allowedOrigins/],
      ['path', 'endpoint', /names http:\/\/127\.0\.0\.1:\d+\/nowhere as its JSONRPC endpoint, but it does not answer A2A there: HTTP error establishing stream for SendStreamingMessage: 404/],
    ] as const) {
      const liar = await startSdkAgent(join(work, `liar-${lie}.log`), ['--lie', lie]);
      try {
        const error = await run(a2aAgent(liar.url, { skill: 'review' }), 'echo this').catch((e: unknown) => e);
        expect(error, lie).toBeInstanceOf(RemoteAgentError);
        expect(error, lie).toMatchObject({ reason });
        expect((error as Error).message, lie).toMatch(message);
        expect(liar.log(), lie).toEqual([]);
      } finally {
        await liar.stop();
      }
    }
  });

  it('an agent that does not stream is polled to the end', SLOW, async () => {
    const plain = await startSdkAgent(join(work, 'plain.log'), ['--no-stream']);
    try {
      const reviewer = a2aAgent(plain.url, { pollMs: 20 });
      expect((await reviewer.card()).streaming).toBe(false);
      expect((await run(reviewer, 'stream it anyway')).output).toBe('Looks good.');
      await expect(run(reviewer, 'fail this one')).rejects.toMatchObject({ reason: 'task_failed', message: expect.stringMatching(/ended failed: cannot review binary files/) });
    } finally {
      await plain.stop();
    }
  });

  it('works in every pattern: a hand-off target, an advisor, a router destination, an orchestrate worker and a plan role', SLOW, async () => {
    const remote = a2aAgent(sdk.url, { name: 'remote-reviewer' });
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'writer', reply: 'draft v1' },
        { agent: 'lead', reply: (r) => `lead saw: ${r.text.includes('### From remote-reviewer') && r.text.includes('echo: ') ? 'the remote advice' : 'nothing'}` },
        { agent: 'desk', reply: { toolCalls: [{ name: 'route_to', arguments: { agent: 'remote-reviewer', reason: 'a review' } }] } },
        { agent: 'boss', times: 1, reply: '@worker:remote-worker\nreview the parser now\n@end' },
        { agent: 'boss', reply: 'The remote worker said it is fine.' },
      ],
      fallback: 'ok',
    });
    const handed = await run(handoff(agent({ name: 'writer' }), remote), 'Write the notes', { adapter });
    expect(handed.output).toMatch(/^echo: [\s\S]*Write the notes[\s\S]*draft v1/);
    expect(handed.agent).toBe('remote-reviewer');
    const advised = await run(advisors(agent({ name: 'lead' }), [remote]), 'Review PR 9', { adapter });
    expect(advised.output).toBe('lead saw: the remote advice');
    const routed = await run(router(agent({ name: 'desk' }), [remote, agent({ name: 'billing', description: 'bills' })]), 'Please review PR 3', { adapter });
    expect([routed.output, routed.agent]).toEqual(['echo: Please review PR 3', 'remote-reviewer']);
    // An agent whose model is the remote: an orchestrate worker ...
    const remoteWorker = agent({ name: 'remote-worker', description: 'reviews code', adapter: a2aAdapter(sdk.url) });
    const orchestrated = await run(orchestrate({ lead: agent({ name: 'boss' }), workers: [remoteWorker], maxIterations: 1 }), 'Get the parser reviewed', { adapter });
    const workerOps: string[] = [];
    walk(orchestrated.trace, (n) => void (n.kind === 'worker' && n.status === 'completed' && workerOps.push(n.name)));
    expect(workerOps).toEqual(['remote-worker']);
    // ... and a plan role.
    const plan = { planSummary: 'review', chunks: [{ sequenceIndex: 0, title: 'Review', prompt: 'stream a review of the parser', dependsOnIndexes: [], complexity: 'Low' as const, role: 'CodeAnalysis' as const }] };
    const planned = await run(planRunnable(plan, { roles: { CodeAnalysis: { adapter: a2aAdapter(sdk.url) } } }), 'Review', { adapter });
    // The chunk's prompt reached the remote agent, and its answer is the chunk's result.
    expect(planned.output).toMatch(/echo: # Chunk 0: Review[\s\S]*stream a review of the parser/);
  });
});

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!check()) throw new Error('timed out');
}
