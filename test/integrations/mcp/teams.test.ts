// Teams as MCP tools against the MCP SDK's real client: `troupe mcp serve`
// in its own process over stdio (the client starts it, as Claude Code or an
// IDE does) and over streamable HTTP; progress notifications while a team
// works, a cancel that cancels the run; sessions kept to their tenant.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { toNodeListener } from '../../../src/integrations/http/node.js';
import { folderTeams, mcpHttpHandler, serveTeams, teamToolName } from '../../../src/integrations/mcp-teams/index.js';
import { agent } from '../../../src/patterns/agent.js';
import { fileStore } from '../../../src/persistence/file-store.js';
import { readRun } from '../../../src/persistence/run-log.js';
import { defineAgent } from '../../../src/agents/define.js';
import { panelDir, panelScript, startNode, troupeCli } from '../../helpers/a2a.js';

const SLOW = { timeout: 60_000 };
const work = mkdtempSync(join(tmpdir(), 'troupe-mcp-teams-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A JSON-RPC message as read from the transport. */
interface WireMessage {
  method?: string;
  params?: { progressToken?: string | number; progress?: number; message?: string };
  result?: unknown;
}

const text = (result: unknown) => ((result as { content?: Array<{ text: string }> }).content?.[0]?.text ?? '');

/** The events of every run logged in the file store at `dir`, oldest run first. */
async function runsIn(dir: string): Promise<TroupeEvent[][]> {
  const store = fileStore(dir);
  const ids = (await store.list('runs/')).filter((k) => k.endsWith('/meta')).map((k) => k.slice('runs/'.length, -'/meta'.length));
  const logs = await Promise.all(ids.map((id) => readRun(id, { store })));
  return logs.sort((a, b) => (a.meta?.startedAt ?? 0) - (b.meta?.startedAt ?? 0)).map((l) => l.events as TroupeEvent[]);
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** Call `tool` and cancel the call once its first progress notification arrives. */
async function callAndCancel(client: Client, tool: string) {
  const controller = new AbortController();
  const progress: string[] = [];
  const call = client.callTool({ name: tool, arguments: { input: 'Take your time' } }, undefined, {
    signal: controller.signal,
    onprogress: (p) => {
      progress.push(p.message ?? '');
      controller.abort();
    },
  });
  await expect(call).rejects.toThrow();
  return progress;
}

describe('troupe mcp serve over stdio (the client starts it)', () => {
  it('lists the folder\'s entry agents as tools, runs a team with progress notifications, cancels a run when the client cancels, and exits when the client closes', SLOW, async () => {
    const store = join(work, 'stdio-store');
    const transport = new StdioClientTransport({ command: process.execPath, args: [...(await troupeCli()), 'mcp', 'serve', panelDir, '--script', panelScript, '--store', store], env: { ...process.env, TROUPE_ADAPTER: '' } as Record<string, string>, stderr: 'pipe' });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(transport);
    // Every message from the server, in the order it arrived, before the client handles it.
    const wire: WireMessage[] = [];
    const handle = transport.onmessage!;
    transport.onmessage = (message) => {
      wire.push(message as WireMessage);
      handle(message);
    };
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['clerk', 'review-panel', 'slowpoke']);
      const panel = tools.find((t) => t.name === 'review-panel')!;
      expect(panel.description).toBe('Reviews a change with a security reviewer and a style reviewer, and gives one verdict');
      expect(panel.inputSchema).toMatchObject({ type: 'object', required: ['input'], properties: { input: { type: 'string' } } });
      const progress: Array<{ progress: number; message?: string }> = [];
      const result = await client.callTool({ name: 'review-panel', arguments: { input: 'Review PR 42' } }, undefined, { onprogress: (p) => progress.push(p) });
      expect(text(result)).toBe('review-panel handled: Review PR 42');
      expect(result.isError).toBeFalsy();
      // The server sends every notification, in order, before the answer: what came over the wire says so.
      const answerAt = wire.findIndex((m) => 'result' in m && text(m.result) === 'review-panel handled: Review PR 42');
      const token = wire.find((m) => m.method === 'notifications/progress')?.params?.progressToken;
      const sent = wire.filter((m) => m.method === 'notifications/progress' && m.params?.progressToken === token);
      expect(sent.every((m) => wire.indexOf(m) < answerAt)).toBe(true);
      const messages = sent.map((m) => m.params?.message);
      expect(messages[0]).toBe('review-panel started');
      expect(messages).toContain('security is working');
      expect(messages).toContain('style answered');
      expect(messages.slice(-2)).toEqual(['review-panel answered', 'review-panel finished (completed)']);
      // progress grows with every notification
      expect(sent.every((m, i) => i === 0 || m.params!.progress! > sent[i - 1]!.params!.progress!)).toBe(true);
      // The SDK's client handles a notification a microtask after reading it and the answer at once, so those read
      // in the same chunk as the answer arrive after the call resolved and are dropped: the caller sees a prefix.
      expect(progress.map((p) => p.message)).toEqual(messages.slice(0, progress.length));
      // A bad call is an error result, not a run.
      const bad = await client.callTool({ name: 'review-panel', arguments: { input: '' } });
      expect([bad.isError, text(bad)]).toEqual([true, 'Error: expected `input` to be the request (a non-empty string), got "" (string)']);
      // The client cancels: the run is cancelled in the server.
      expect(await callAndCancel(client, 'slowpoke')).toEqual(['slowpoke started']);
      await until(async () => (await runsIn(store)).some((events) => events.at(-1)?.type === 'run.failed'), 'the cancelled run ended');
      const runs = await runsIn(store);
      expect(runs.map((events) => [events[0]?.type === 'run.started' ? events[0].runnable : '', events.at(-1)?.type, (events.at(-1) as { code?: string }).code])).toEqual([
        ['review-panel + advisors', 'run.completed', undefined],
        ['slowpoke', 'run.failed', 'cancelled'],
      ]);
    } finally {
      await client.close();
    }
    // Closing stdin ends the server: the client's transport saw it exit.
    await until(() => transport.pid === null || !isAlive(transport.pid), 'the server exited');
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('troupe mcp serve --http (its own process)', () => {
  it('serves streamable HTTP behind a bearer token: progress while a team works, a cancel that cancels the run', SLOW, async () => {
    const store = join(work, 'http-store');
    const served = await startNode([...(await troupeCli()), 'mcp', 'serve', panelDir, '--http', '--port', '0', '--token', 'tok', '--script', panelScript, '--store', store], /^MCP endpoint: (\S+)/m);
    try {
      const url = new URL(served.match[1]!);
      const refused = new Client({ name: 'no-token', version: '1.0.0' });
      await expect(refused.connect(new StreamableHTTPClientTransport(url))).rejects.toThrow(/unauthorized.*Send Authorization: Bearer <token>/);
      const client = new Client({ name: 'test-client', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: 'Bearer tok' } } }));
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['clerk', 'review-panel', 'slowpoke']);
      const progress: string[] = [];
      const result = await client.callTool({ name: 'review-panel', arguments: { input: 'Review PR 7' } }, undefined, { onprogress: (p) => progress.push(p.message ?? '') });
      expect(text(result)).toBe('review-panel handled: Review PR 7');
      expect(progress).toContain('security answered');
      expect(await callAndCancel(client, 'slowpoke')).toEqual(['slowpoke started']);
      await until(async () => (await runsIn(join(store, 'tenants', 'default'))).some((events) => events.at(-1)?.type === 'run.failed'), 'the cancelled run ended');
      await client.close();
    } finally {
      await served.stop();
    }
    expect(await served.exited).toBe(0);
  });
});

describe('mcpHttpHandler in this process', () => {
  let http: Server | undefined;
  afterAll(() => new Promise<void>((resolve) => (http ? (http.closeAllConnections(), http.close(() => resolve())) : resolve())));

  it('keeps a session to the tenant that opened it, and logs its runs in that tenant\'s namespace', async () => {
    const store = memoryStore();
    const mcp = await mcpHttpHandler({
      teams: [{ name: 'helper.v2', runnable: agent({ name: 'helper' }) }],
      run: { adapter: scriptedAdapter({ fallback: 'done' }) },
      store,
      authorize: (request) => {
        const tenant = request.headers.get('x-tenant');
        return tenant ? { tenant } : null;
      },
    });
    http = createServer(toNodeListener((request) => mcp.handle(request)));
    await new Promise<void>((resolve) => http!.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { 'x-tenant': 'acme' } } });
    const client = new Client({ name: 'acme', version: '1.0.0' });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['helper_v2']);
    expect(text(await client.callTool({ name: 'helper_v2', arguments: { input: 'hi' } }))).toBe('done');
    expect(mcp.sessions).toBe(1);
    // Another tenant holding the session id finds nothing.
    const stolen = await fetch(url, { method: 'POST', headers: { 'x-tenant': 'globex', 'mcp-session-id': transport.sessionId!, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) });
    expect(stolen.status).toBe(404);
    expect((await store.list('tenants/acme/runs/')).some((k) => k.endsWith('/meta'))).toBe(true);
    expect(await store.list('tenants/globex/')).toEqual([]);
    await client.close();
    await mcp.close();
    expect(mcp.sessions).toBe(0);
  });

  it('teams: tool names MCP accepts, duplicates refused, a folder\'s entry agents', async () => {
    expect(teamToolName('devsquad.plan context')).toBe('devsquad_plan_context');
    expect(teamToolName('x'.repeat(80)).length).toBe(64);
    await expect(serveTeams({ teams: [{ name: 'a.b', runnable: agent({ name: 'a' }) }, { name: 'a_b', runnable: agent({ name: 'b' }) }] })).rejects.toThrow('Two teams would be the tool "a_b" ("a.b" and "a_b"): give one a `tool` name');
    await expect(serveTeams({ teams: [] })).rejects.toThrow(/Expected `teams` to be a non-empty list/);
    const defs = [defineAgent({ name: 'desk', system: 'x', description: 'Front desk', router: { destinations: ['billing'] } }), defineAgent({ name: 'billing', system: 'y' })];
    const flows = { desk: agent({ name: 'desk' }), billing: agent({ name: 'billing' }) };
    expect(folderTeams(defs, flows).map((t) => [t.name, t.description])).toEqual([['desk', 'Front desk']]);
    expect(folderTeams(defs, flows, ['billing']).map((t) => [t.name, t.description])).toEqual([['billing', 'An agent of troupe: billing']]);
    expect(() => folderTeams(defs, flows, ['nobody'])).toThrow('Unknown agent "nobody" (agents: desk, billing)');
  });
});
