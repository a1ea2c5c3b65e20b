// AG-UI: the real `@ag-ui/client` HttpAgent against the handler on
// node:http. A run that needs an approval ends its AG-UI run with an
// interrupt; the next run resumes with the answer and streams on to the
// end. Every event troupe sends passes `@ag-ui/core`'s schemas.
import { HttpAgent, verifyEvents, type AgentSubscriber } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { from, lastValueFrom, toArray } from 'rxjs';
import { EventSchemas } from '@ag-ui/core/schemas';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agent, defineTool, startRun, type RunHandle } from 'troupe';
import { ApprovalQueue } from 'troupe/guardrails';
import { executePlan } from 'troupe/plan';
import { memoryStore, scriptedAdapter } from 'troupe/testing';
import { AguiMapper, remoteApprovals, runHandler } from 'troupe/http';
import { startServer, type TestServer } from '../../helpers/http-server.js';
import { chunk, planOf } from '../../plan/helpers.js';

/** `@ag-ui/client`'s verifier over one AG-UI run's events: it throws on any event out of the protocol's order. */
async function verified(events: ReadonlyArray<Record<string, unknown>>): Promise<number> {
  return (await lastValueFrom(from(events as unknown as BaseEvent[]).pipe(verifyEvents(), toArray()))).length;
}

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe('AG-UI over HTTP with @ag-ui/client', () => {
  it('runs, stops at an approval with an interrupt, resumes with the answer and finishes', async () => {
    const root = memoryStore();
    const deployed: string[] = [];
    const deploy = defineTool({ name: 'deploy', description: 'Deploy', parameters: z.object({ env: z.string() }), execute: ({ env }) => (deployed.push(env), `deployed to ${env}`) });
    const adapter = scriptedAdapter({
      rules: [{ agent: 'ops', reply: (r) => (r.turn === 1 ? { text: 'Deploying now.', toolCalls: [{ name: 'deploy', arguments: { env: 'prod' }, id: 'call-7' }] } : 'Deployed to prod.') }],
    });
    const runs: RunHandle[] = [];
    const server = await startServer(
      runHandler({
        store: root,
        pollMs: 5,
        authorize: (req) => (req.headers.get('authorization') === 'Bearer t' ? { tenant: 'acme' } : null),
        start: ({ store, runId, input }) => {
          const approvals = new ApprovalQueue({ handler: remoteApprovals({ pollMs: 5 }), store });
          runs.push(startRun(agent({ name: 'ops', tools: [approvals.guard(deploy)] }), input, { adapter, store, runId }));
        },
      }),
    );
    servers.push(server);
    const client = new HttpAgent({ url: `${server.url}/agui`, headers: { authorization: 'Bearer t' }, threadId: 'thread-1' });
    const seen: Array<Record<string, unknown>> = [];
    const subscriber: AgentSubscriber = { onEvent: ({ event }) => void seen.push(event as unknown as Record<string, unknown>) };
    client.addMessage({ id: 'u1', role: 'user', content: 'Deploy to prod' });

    await client.runAgent({}, subscriber);
    expect(seen[0]).toMatchObject({ type: 'RUN_STARTED', threadId: 'thread-1' });
    const finished = seen.at(-1) as { type: string; outcome: { type: string; interrupts: Array<{ id: string; reason: string; toolCallId?: string; responseSchema?: unknown }> } };
    expect(finished.type).toBe('RUN_FINISHED');
    expect(finished.outcome.type).toBe('interrupt');
    const [interrupt] = finished.outcome.interrupts;
    expect(interrupt).toMatchObject({ reason: 'approval', toolCallId: 'call-7' });
    expect(client.pendingInterrupts.map((i) => i.id)).toEqual([interrupt!.id]);
    expect(seen.map((e) => e.type)).toEqual(expect.arrayContaining(['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'STEP_STARTED', 'STEP_FINISHED']));
    expect(client.messages.some((m) => m.role === 'assistant' && m.content === 'Deploying now.')).toBe(true);
    // The tool call belongs to the message of the turn that made it: a front end shows it under that text.
    const started = seen.find((e) => e.type === 'TEXT_MESSAGE_START')!;
    expect(seen.find((e) => e.type === 'TOOL_CALL_START')).toMatchObject({ toolCallId: 'call-7', parentMessageId: started.messageId });
    const message = client.messages.find((m) => m.id === started.messageId) as { content?: string; toolCalls?: Array<{ id: string }> };
    expect(message).toMatchObject({ content: 'Deploying now.', toolCalls: [expect.objectContaining({ id: 'call-7' })] });
    // In order by the protocol's verifier, and nothing stamped before RUN_STARTED.
    expect(await verified(seen)).toBe(seen.length);
    for (const event of seen) expect(event.timestamp as number).toBeGreaterThanOrEqual(seen[0]!.timestamp as number);
    expect(deployed).toEqual([]);

    // A resume answer that does not fit is refused.
    const bad = await fetch(`${server.url}/agui`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ threadId: 'thread-1', runId: 'r3', messages: [], resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: 'yes' } }] }),
    });
    expect(bad.status).toBe(400);
    expect(deployed).toEqual([]);

    const before = seen.length;
    const result = await client.runAgent({ resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }] }, subscriber);
    const second = seen.slice(before);
    expect(second[0]).toMatchObject({ type: 'RUN_STARTED', threadId: 'thread-1' });
    expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' }, result: 'Deployed to prod.' });
    expect(result.result).toBe('Deployed to prod.');
    expect(second.filter((e) => e.type === 'TOOL_CALL_RESULT')).toEqual([expect.objectContaining({ toolCallId: 'call-7', content: 'deployed to prod' })]);
    // Nothing of the first run is sent again.
    expect(second.filter((e) => e.type === 'TOOL_CALL_START')).toEqual([]);
    expect(deployed).toEqual(['prod']);
    expect(await verified(second)).toBe(second.length);
    for (const event of second) expect(event.timestamp as number).toBeGreaterThanOrEqual(second[0]!.timestamp as number);
    await runs[0]!.result;
    for (const event of seen) expect(EventSchemas.safeParse(event).success, JSON.stringify(event)).toBe(true);

  });

  it("publishes a plan's chunk statuses as shared state", async () => {
    const store = memoryStore();
    const adapter = scriptedAdapter({ fallback: 'done' });
    const handle = startRun(
      { name: 'plan', kind: 'plan', run: (input, ctx) => executePlan(planOf(chunk(0), chunk(1, [0])), { adapter, ctx, task: input, planId: 'p' }) },
      'Fix it',
      { store, runId: 'plan-run' },
    );
    await handle.result;
    const mapper = new AguiMapper('plan-run', 'watch');
    const out: Array<Record<string, unknown>> = [...mapper.open(0)];
    const { records } = await store.read('runs/plan-run/events');
    records.forEach((record, seq) => out.push(...mapper.map(seq, record as never).events));
    const snapshots = out.filter((e) => e.type === 'STATE_SNAPSHOT') as Array<{ snapshot: { troupe: { chunks?: Array<{ id: string; status: string }> } } }>;
    expect(snapshots.at(-1)!.snapshot.troupe.chunks!.map((c) => c.status)).toEqual(['completed', 'completed']);
    expect(out.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    for (const event of out) expect(EventSchemas.safeParse(event).success, JSON.stringify(event)).toBe(true);
  });
});
