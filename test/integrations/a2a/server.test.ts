// troupe's A2A server in this process, on a node:http server of
// 127.0.0.1: bad input answered with the protocol's own error codes and
// nothing started, tenants kept apart, approvals as input-required,
// resubscribing, listing, the card, option checks and closing. (The SDK's
// client against the server in its own process: interop.test.ts.)
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClientFactory } from '@a2a-js/sdk/client';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { defineAgent } from '../../../src/agents/define.js';
import { ConfigurationError } from '../../../src/core/errors.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { defineTool } from '../../../src/core/tools.js';
import { a2aServer, buildAgentCard, type A2AServer, type A2AServerOptions } from '../../../src/integrations/a2a/index.js';
import { toNodeListener } from '../../../src/integrations/http/node.js';
import { remoteApprovals } from '../../../src/integrations/http/remote.js';
import { agent } from '../../../src/patterns/agent.js';
import { ApprovalQueue } from '../../../src/guardrails/approvals.js';
import { planRunnable } from '../../../src/plan/engine/execute.js';
import { sendParams, userMessage } from '../../helpers/a2a.js';

let open: Array<{ server: A2AServer; http: Server }> = [];
afterEach(async () => {
  for (const { server, http } of open.splice(0)) {
    await server.close();
    await new Promise<void>((resolve) => {
      http.close(() => resolve());
      http.closeAllConnections();
    });
  }
});

/** The server on a free port; the tenant is the `x-tenant` header (none: 401). */
async function serve(options: Partial<A2AServerOptions> = {}) {
  const adapter = scriptedAdapter({ fallback: (r) => `answer to: ${r.text}`, latencyMs: 5 });
  const store = memoryStore();
  const server = await a2aServer({
    runnable: agent({ name: 'helper', description: 'Helps' }),
    store,
    authorize: (request) => {
      const tenant = request.headers.get('x-tenant');
      return tenant ? { tenant } : null;
    },
    run: { adapter },
    pollMs: 10,
    ...options,
  });
  const http = createServer(toNodeListener((request) => server.handle(request)));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  open.push({ server, http });
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/`;
  const rpc = async (body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-tenant': 'acme', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    type Body = { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };
    // A streaming method answers a valid message with an event stream: each event is a JSON-RPC response of its own.
    if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
      const events = (await response.text()).split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)) as Body);
      return { status: response.status, body: events.at(-1) ?? {}, events };
    }
    return { status: response.status, body: (await response.json()) as Body, events: [] as Body[] };
  };
  const client = (tenant: string) => new ClientFactory().createFromAgentCard({ ...emptyCard(url), name: 'helper' }).then((c) => ({ c, opts: { serviceParameters: { 'x-tenant': tenant } } }));
  return { server, url, rpc, adapter, store, client };
}

function emptyCard(url: string) {
  return { name: '', description: '', supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }], provider: undefined, version: '1', capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false }, securitySchemes: {}, securityRequirements: [], defaultInputModes: [], defaultOutputModes: [], skills: [], signatures: [] };
}

const send = (parts: unknown[], extra: Record<string, unknown> = {}, id: unknown = 1) => ({ jsonrpc: '2.0', id, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts, ...extra } } });

describe('troupe\'s A2A server: bad input', () => {
  it('is answered with the protocol\'s own error codes, and nothing starts', async () => {
    const { rpc, adapter, store, url } = await serve({ maxPartBytes: 1000, maxParts: 3, maxBodyBytes: 20_000 });
    const code = async (body: unknown, headers?: Record<string, string>) => (await rpc(body, headers)).body.error?.code;
    expect((await rpc('{"jsonrpc": "2.0", "id": 1, "method"')).body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not JSON' } });
    expect(await code([send([{ text: 'hi' }])])).toBe(-32600);
    expect((await rpc({ jsonrpc: '1.0', id: 7, method: 'SendMessage', params: {} })).body).toMatchObject({ id: 7, error: { code: -32600, message: 'Invalid Request: `jsonrpc` must be "2.0"' } });
    expect(await code({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: [1] })).toBe(-32600);
    expect(await code({ jsonrpc: '2.0', id: { nested: true }, method: 'GetTask', params: { id: 'x' } })).toBe(-32600);
    expect(await code({ jsonrpc: '2.0', id: 1, method: 'message/send', params: {} })).toBe(-32601);
    expect(await code({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} })).toBe(-32602);
    expect(await code(send([{ text: 'hi' }], { role: 'ROLE_AGENT' }))).toBe(-32602);
    expect(await code(send([]))).toBe(-32602);
    expect(await code(send([{ text: '   ' }]))).toBe(-32602);
    expect(await code({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { role: 'ROLE_USER', parts: [{ text: 'no id' }] } } })).toBe(-32602);
    expect(await code(send([{ text: 'hi' }], { contextId: '../../etc' }))).toBe(-32602);
    expect(await code(send([{ url: 'https://example.com/a.pdf', mediaType: 'application/pdf' }]))).toBe(-32005);
    expect(await code(send([{ raw: 'aGVsbG8=' }]))).toBe(-32005);
    const big = await rpc(send([{ text: 'x'.repeat(1001) }]));
    expect(big.body.error).toMatchObject({ code: -32602, message: 'Part 0 is 1001 bytes; parts of at most 1000 bytes are taken' });
    expect(await code(send([{ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' }]))).toBe(-32602);
    expect(await code(send([{ text: 'hi' }], {}, 1), { 'a2a-version': '0.3' })).toBe(-32009);
    const { params } = send([{ text: 'hi' }]);
    expect(await code({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { ...params, configuration: { acceptedOutputModes: ['image/png'] } } })).toBe(-32005);
    expect(await code({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { ...params, configuration: { taskPushNotificationConfig: { url: 'https://example.com/hook' } } } })).toBe(-32003);
    const tooLarge = await rpc(send([{ text: 'x'.repeat(30_000) }]));
    expect([tooLarge.status, tooLarge.body.error?.code]).toEqual([413, -32600]);
    const wrongType = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain', 'x-tenant': 'acme' }, body: 'hi' });
    expect(wrongType.status).toBe(415);
    // Unknown, malformed and absent task ids.
    expect(await code({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'no-such-task' } })).toBe(-32001);
    expect(await code({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: '../../etc/passwd' } })).toBe(-32001);
    expect(await code({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: {} })).toBe(-32602);
    expect(await code({ jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: 'no-such-task' } })).toBe(-32001);
    expect(await code(send([{ text: 'answer' }], { taskId: 'no-such-task' }))).toBe(-32001);
    expect(await code({ jsonrpc: '2.0', id: 1, method: 'GetExtendedAgentCard' })).toBe(-32007);
    expect(await code({ jsonrpc: '2.0', id: 1, method: 'ListTaskPushNotificationConfigs', params: { taskId: 'x' } })).toBe(-32003);
    // Nothing started: no model call, no run, no task.
    expect(adapter.calls).toEqual([]);
    expect(await store.list('')).toEqual([]);
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} })).body.result).toMatchObject({ tasks: [], totalSize: 0 });
    // Unauthenticated: 401 before anything is read.
    expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })).status).toBe(401);
  });
});

describe('troupe\'s A2A server: any input', () => {
  it('random params and messages get a result or one of the protocol\'s errors, never a failure of the server', async () => {
    const { rpc, adapter } = await serve({ maxPartBytes: 2000 });
    const codes = new Set([-32600, -32601, -32602, -32001, -32003, -32004, -32005, -32007]);
    const methods = fc.constantFrom('SendMessage', 'GetTask', 'CancelTask', 'ListTasks', 'SubscribeToTask', 'SendStreamingMessage', 'Nope');
    const part = fc.oneof(fc.record({ text: fc.string() }), fc.record({ data: fc.jsonValue() }), fc.record({ url: fc.string() }), fc.jsonValue());
    const message = fc.oneof(fc.jsonValue(), fc.record({ messageId: fc.string({ maxLength: 200 }), role: fc.constantFrom('ROLE_USER', 'ROLE_AGENT', 1, 'x'), taskId: fc.string(), contextId: fc.string(), parts: fc.array(part, { maxLength: 4 }) }, { requiredKeys: [] }));
    const params = fc.oneof(fc.jsonValue(), fc.record({ message, id: fc.string(), configuration: fc.jsonValue() }, { requiredKeys: [] }));
    await fc.assert(
      fc.asyncProperty(methods, params, async (method, p) => {
        const { status, body, events } = await rpc({ jsonrpc: '2.0', id: 1, method, params: p });
        for (const event of events) expect(event.result !== undefined || codes.has(event.error?.code ?? 0), `${method} event ${JSON.stringify(event)}`).toBe(true);
        if (status === 200 && body.result !== undefined) return;
        expect(status === 200 || status === 413, `${method} ${JSON.stringify(p).slice(0, 300)} -> ${status} ${JSON.stringify(body)}`).toBe(true);
        expect(codes.has(body.error!.code), `${method} ${JSON.stringify(p).slice(0, 200)} -> ${JSON.stringify(body.error)}`).toBe(true);
      }),
      { numRuns: Number(process.env['A2A_RUNS'] ?? 150) },
    );
    // Whatever started (a valid message may), the server answered; nothing failed it.
    expect(adapter.calls.every((c) => typeof c.text === 'string')).toBe(true);
  });
});

describe('troupe\'s A2A server: tenants', () => {
  it('another tenant\'s task id is not found: to get, cancel, answer, resubscribe and list', async () => {
    const adapter = scriptedAdapter({ replies: { helper: [{ text: 'late', delayMs: 60_000 }] } });
    const { rpc } = await serve({ run: { adapter } });
    const started = await rpc({ ...send([{ text: 'work on it' }]), params: { ...send([{ text: 'work on it' }]).params, configuration: { returnImmediately: true } } });
    const taskId = (started.body.result as { task: { id: string } }).task.id;
    const other = { 'x-tenant': 'globex' };
    for (const body of [
      { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId } },
      { jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: taskId } },
      send([{ text: 'answer' }], { taskId }),
      { jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: taskId } },
    ]) {
      expect((await rpc(body, other)).body.error, body.method).toMatchObject({ code: -32001 });
    }
    // A tenant named in the request changes nothing: the tenant is the authorize hook's.
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId, tenant: 'acme' } }, other)).body.error).toMatchObject({ code: -32001 });
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }, other)).body.result).toMatchObject({ tasks: [] });
    const mine = await rpc({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId } });
    expect(mine.body.result).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_WORKING' } });
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: taskId } })).body.result).toMatchObject({ status: { state: 'TASK_STATE_CANCELED' } });
  });
});

describe('troupe\'s A2A server: what runs ask, and tasks over time', () => {
  it('an approval makes the task input-required with the tool call; the answer in the next message decides it', async () => {
    const deploy = defineTool({ name: 'deploy', description: 'Deploy', parameters: z.object({ env: z.string() }), execute: ({ env }) => `deployed to ${env}` });
    const approvals = new ApprovalQueue({ handler: remoteApprovals({ pollMs: 10 }) });
    const adapter = scriptedAdapter({ replies: { ops: [{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }, 'Done: deployed.', { toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }, 'Not deployed.'] } });
    const { server, url } = await serve({ runnable: agent({ name: 'ops', tools: [approvals.guard(deploy)] }), run: { adapter } });
    const client = await new ClientFactory().createFromAgentCard({ ...emptyCard(url), name: 'ops' });
    const opts = { serviceParameters: { 'x-tenant': 'acme' } };
    for (const [answer, tool, output] of [['yes', 'deployed to prod', 'Done: deployed.'], ['no', 'was denied', 'Not deployed.']] as const) {
      const task = (await client.sendMessage(sendParams(userMessage('Deploy to prod')), opts)) as { id: string; status?: { state: number; message?: { parts: Array<{ content?: { $case: string; value: unknown } }> } } };
      expect(task.status?.state).toBe(6);
      const data = task.status?.message?.parts.find((p) => p.content?.$case === 'data')?.content?.value as { troupe: { kind: string; tool: string; arguments: unknown } };
      expect(data.troupe).toMatchObject({ kind: 'approval', tool: 'deploy', arguments: { env: 'prod' } });
      // "maybe" is neither: refused, and the task still waits.
      await expect(client.sendMessage(sendParams(userMessage('maybe', { taskId: task.id })), opts)).rejects.toThrow(/does not answer the approval request/);
      const done = (await client.sendMessage(sendParams(userMessage(answer, { taskId: task.id })), opts)) as { status?: { state: number }; artifacts: Array<{ parts: Array<{ content?: { value: unknown } }> }> };
      expect(done.status?.state).toBe(3);
      expect(done.artifacts[0]?.parts[0]?.content?.value).toBe(output);
      expect(adapter.calls.at(-1)!.text).toContain(tool);
    }
    expect(server.running).toBe(0);
  });

  it('resubscribing follows a working task to its end; ListTasks filters by context and state', async () => {
    // The slow answer waits until the resubscription has seen the task: however loaded the machine, it is still working then.
    let release = () => {};
    const resubscribed = new Promise<void>((resolve) => (release = resolve));
    const slowAnswer = async () => {
      await resubscribed;
      return 'slow answer';
    };
    const adapter = scriptedAdapter({ replies: { helper: [slowAnswer, 'quick answer'] } });
    const { url } = await serve({ run: { adapter } });
    const client = await new ClientFactory().createFromAgentCard({ ...emptyCard(url), name: 'helper' });
    const opts = { serviceParameters: { 'x-tenant': 'acme' } };
    const slow = (await client.sendMessage(sendParams(userMessage('slow one', { contextId: 'ctx-1' }), { returnImmediately: true }), opts)) as { id: string };
    const seen: string[] = [];
    for await (const update of client.resubscribeTask({ tenant: '', id: slow.id }, opts)) {
      const p = update.payload!;
      seen.push(p.$case === 'statusUpdate' ? `status ${p.value.status?.state}` : p.$case);
      release();
    }
    expect(seen[0]).toBe('task');
    expect(seen.slice(-2)).toEqual(['artifactUpdate', 'status 3']);
    await client.sendMessage(sendParams(userMessage('quick one', { contextId: 'ctx-2' })), opts);
    const all = await client.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined }, opts);
    expect(all.tasks.length).toBe(2);
    const ctx1 = await client.listTasks({ tenant: '', contextId: 'ctx-1', status: 0, pageToken: '', statusTimestampAfter: undefined, includeArtifacts: true }, opts);
    expect(ctx1.tasks.map((t) => [t.id, t.artifacts[0]?.parts[0]?.content?.value])).toEqual([[slow.id, 'slow answer']]);
    expect((await client.listTasks({ tenant: '', contextId: '', status: 3, pageSize: 1, pageToken: '', statusTimestampAfter: undefined }, opts)).nextPageToken).toBe('1');
    // An ended task is not resubscribed to.
    await expect(async () => {
      for await (const _ of client.resubscribeTask({ tenant: '', id: slow.id }, opts)) void _;
    }).rejects.toThrow(/has ended \(completed\)/);
  });

  it('serves a plan as it serves an agent: its chunks run, the aggregated answer is the artifact', async () => {
    const plan = { planSummary: 'notes', chunks: [
      { sequenceIndex: 0, title: 'Collect changes', prompt: 'List what changed since 1.9.', dependsOnIndexes: [], complexity: 'Low' as const, role: 'Generic' as const },
      { sequenceIndex: 1, title: 'Write notes', prompt: 'Write the release notes from the list.', dependsOnIndexes: [0], complexity: 'Low' as const, role: 'Generic' as const },
    ] };
    const adapter = scriptedAdapter({ fallback: (r) => (r.text.includes('Write the release notes') ? 'Notes: faster start.' : 'Changed: start time.') });
    const { url } = await serve({ runnable: planRunnable(plan), run: { adapter } });
    const client = await new ClientFactory().createFromAgentCard({ ...emptyCard(url), name: 'plan' });
    const task = (await client.sendMessage(sendParams(userMessage('Release 2.0')), { serviceParameters: { 'x-tenant': 'acme' } })) as { status?: { state: number }; artifacts: Array<{ parts: Array<{ content?: { value: unknown } }> }>; metadata?: Record<string, unknown> };
    expect(task.status?.state).toBe(3);
    expect(String(task.artifacts[0]?.parts[0]?.content?.value)).toContain('Notes: faster start.');
    expect(task.metadata?.['troupe.usage']).toMatchObject({ turns: 2 });
  });

  it('close() cancels the runs the server started, and starts no more', async () => {
    const adapter = scriptedAdapter({ replies: { helper: [{ text: 'never', delayMs: 60_000 }] } });
    const { server, rpc } = await serve({ run: { adapter } });
    const started = await rpc({ ...send([{ text: 'go' }]), params: { ...send([{ text: 'go' }]).params, configuration: { returnImmediately: true } } });
    const taskId = (started.body.result as { task: { id: string } }).task.id;
    expect(server.running).toBe(1);
    await server.close();
    expect(server.running).toBe(0);
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId } })).body.result).toMatchObject({ status: { state: 'TASK_STATE_CANCELED' } });
    expect((await rpc(send([{ text: 'more' }]))).body.error).toMatchObject({ code: -32603, message: 'The A2A server is closing' });
  });
});

describe('troupe\'s A2A server: the card and the options', () => {
  it('the card is generated from the runnable, or from the agent files with their skills; options replace any field', async () => {
    const defs = [defineAgent({ name: 'lead', description: 'Leads', system: 'x', advisors: ['sec'] }), defineAgent({ name: 'sec', system: 'Checks security.\nMore.', tools: ['grep'] })];
    const card = buildAgentCard({ runnable: 'lead', url: 'https://agents.example.com/lead/', agents: { defs, entry: 'lead' } }, { version: '2.1.0', provider: { organization: 'Example', url: 'https://example.com' } });
    expect(card).toMatchObject({ name: 'lead', description: 'Leads', version: '2.1.0', provider: { organization: 'Example' }, capabilities: { streaming: true, pushNotifications: false } });
    expect(card.skills).toEqual([
      { id: 'lead', name: 'lead', description: 'Leads', tags: ['advisors'] },
      { id: 'sec', name: 'sec', description: 'Checks security.', tags: ['tool:grep'] },
    ]);
    expect(buildAgentCard({ runnable: 'helper', url: 'http://x/' }).skills).toEqual([{ id: 'helper', name: 'helper', description: 'Runs helper on the request', tags: ['troupe'] }]);
    expect(() => buildAgentCard({ runnable: 'x', url: 'http://x/' }, { skills: [{ id: 'a', name: 'a', description: '', tags: [] }, { id: 'a', name: 'b', description: '', tags: [] }] })).toThrow('Skill id "a" is given twice');
    const { url } = await serve({ card: { name: 'Helper', securitySchemes: { key: { apiKeySecurityScheme: { location: 'header', name: 'x-api-key' } } } } });
    const served = (await (await fetch(`${url}.well-known/agent-card.json`)).json()) as Record<string, unknown>;
    expect(served).toMatchObject({ name: 'Helper', supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], securityRequirements: [{ schemes: { key: { list: [] } } }] });
  });

  it('options are checked when the server is made, naming the option', async () => {
    const base = { runnable: agent({ name: 'a' }), store: memoryStore(), authorize: () => ({ tenant: 't' }) };
    await expect(a2aServer({ ...base, pollMS: 5 } as unknown as A2AServerOptions)).rejects.toThrow('Unknown option `pollMS` of a2aServer; did you mean `pollMs`?');
    await expect(a2aServer({ ...base, store: undefined } as unknown as A2AServerOptions)).rejects.toThrow(ConfigurationError);
    const { getVersioned: _g, setIf: _s, ...plain } = memoryStore();
    await expect(a2aServer({ ...base, store: plain })).rejects.toThrow('Expected `store` to have compare-and-set (getVersioned and setIf)');
    await expect(a2aServer({ ...base, runnable: undefined })).rejects.toThrow(/Expected `runnable` to be a runnable \(or `start` to be given\)/);
    await expect(a2aServer({ ...base, url: 'ftp://x' })).rejects.toThrow('Expected `url` to be an http(s) URL, got "ftp://x" (string)');
    await expect(a2aServer({ ...base, basePath: 'a2a' })).rejects.toThrow('Expected `basePath` to start with "/"');
    await expect(a2aServer({ ...base, maxPartBytes: -1 })).rejects.toThrow('Expected `maxPartBytes` to be a positive integer, got -1 (number)');
    await expect(a2aServer({ ...base, run: { adaptr: 1 } as never })).rejects.toThrow('Unknown option `run.adaptr` of a2aServer; did you mean `run.adapter`?');
  });
});
