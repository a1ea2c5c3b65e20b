// troupe/mcp against the MCP SDK's real client: over the tool bridge (the
// client spawns the bridge script, as a CLI does) and, for serveTools, over
// the SDK's in-memory transport.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SimulatedClock } from '../../../src/core/clock.js';
import { defineRunnable } from '../../../src/core/runnable.js';
import { run } from '../../../src/core/run.js';
import { defineTool, type ToolDefinition } from '../../../src/core/tools.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import {
  DEFAULT_BRIDGE_AUTH_TIMEOUT_MS,
  DEFAULT_BRIDGE_MAX_PENDING,
  serveTools,
  startToolBridge,
  type McpToolCall,
  type ToolBridge,
  type ToolBridgeOptions,
} from '../../../src/integrations/mcp/index.js';

const tools = [
  {
    name: 'add',
    description: 'Add two numbers',
    parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  },
  { name: 'fail', description: 'Always fails', parameters: { type: 'object', properties: {} } },
  { name: 'slow', description: 'Waits until cancelled', parameters: { type: 'object', properties: {} } },
];

const text = (result: unknown) => ((result as { content: Array<{ text: string }> }).content[0]?.text ?? '');

let bridge: ToolBridge | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close().catch(() => undefined);
  await bridge?.close();
  client = bridge = undefined;
});

/** A bridge whose calls are recorded; `slow` waits for its signal. No client yet: `connectNow()` connects one. */
async function openBridge(extra: Partial<ToolBridgeOptions> = {}) {
  const calls: McpToolCall[] = [];
  const aborted: string[] = [];
  const b = (bridge = await startToolBridge({
    ...extra,
    tools,
    async call(call) {
      calls.push(call);
      if (call.name === 'fail') throw new Error('disk full');
      if (call.name === 'slow') {
        await new Promise<void>((resolve) => call.signal.addEventListener('abort', () => resolve(), { once: true }));
        aborted.push(call.name);
        return { content: 'too late' };
      }
      const { a, b } = call.arguments as { a: number; b: number };
      return a < 0 ? { content: 'negative numbers are not allowed', isError: true } : { content: String(a + b) };
    },
  }));
  const connectNow = async () => {
    const c = (client = new Client({ name: 'test-client', version: '1.0.0' }));
    const transport = new StdioClientTransport({ command: b.command, args: [...b.args], stderr: 'pipe' });
    await c.connect(transport);
    return { client: c, transport };
  };
  return { calls, aborted, bridge: b, connectNow };
}

/** A bridge whose calls are recorded, and its client (which spawns the bridge script, as a CLI does). */
async function startRecordingBridge(extra: Partial<ToolBridgeOptions> = {}) {
  const opened = await openBridge(extra);
  return { ...opened, ...(await opened.connectNow()) };
}

/** Idle connections to `port` that send nothing; `closed` counts those the other side closed. */
function idleSockets(port: number, count: number) {
  const state = { connected: 0, closed: 0, sockets: [] as Socket[] };
  for (let i = 0; i < count; i++) {
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('connect', () => state.connected++);
    socket.on('error', () => undefined);
    socket.on('close', () => state.closed++);
    state.sockets.push(socket);
  }
  return state;
}

/**
 * `count` idle connections, opened 100 at a time (each batch connected
 * before the next: more at once than the listen backlog would have the
 * kernel drop SYNs, and the client retry them seconds later).
 */
async function manyIdleSockets(port: number, count: number) {
  const batches: Array<ReturnType<typeof idleSockets>> = [];
  for (let opened = 0; opened < count; opened += 100) {
    const batch = idleSockets(port, Math.min(100, count - opened));
    batches.push(batch);
    await waitFor(() => batch.connected + batch.closed >= batch.sockets.length, 3_000);
  }
  return {
    get connected() {
      return batches.reduce((n, b) => n + b.connected, 0);
    },
    get closed() {
      return batches.reduce((n, b) => n + b.closed, 0);
    },
    sockets: batches.flatMap((b) => b.sockets),
  };
}

describe('startToolBridge with the SDK client', () => {
  it('lists the tools with their JSON Schema', async () => {
    const { client } = await startRecordingBridge();
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name)).toEqual(['add', 'fail', 'slow']);
    expect(listed.tools[0]).toMatchObject({ description: 'Add two numbers', inputSchema: tools[0]!.parameters });
  });

  it('hands calls to `call` and returns its answer, error answers included', async () => {
    const { client, calls } = await startRecordingBridge();
    expect(text(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }))).toBe('5');
    expect(calls[0]).toMatchObject({ name: 'add', arguments: { a: 2, b: 3 } });
    const refused = await client.callTool({ name: 'add', arguments: { a: -1, b: 3 } });
    expect(refused).toMatchObject({ isError: true });
    expect(text(refused)).toBe('negative numbers are not allowed');
  });

  it('turns a throw into an error result, and answers an unknown tool without calling `call`', async () => {
    const { client, calls } = await startRecordingBridge();
    const failed = await client.callTool({ name: 'fail', arguments: {} });
    expect(failed).toMatchObject({ isError: true });
    expect(text(failed)).toBe('Error: disk full');
    const unknown = await client.callTool({ name: 'format_disk', arguments: {} });
    expect(unknown).toMatchObject({ isError: true });
    expect(text(unknown)).toBe('Error: unknown tool "format_disk". Available tools: add, fail, slow');
    expect(calls.map((c) => c.name)).toEqual(['fail']);
  });

  it('aborts the call when the client cancels it, and keeps serving', async () => {
    const { client, calls, aborted } = await startRecordingBridge();
    const controller = new AbortController();
    const pending = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: controller.signal });
    await waitFor(() => calls.length === 1);
    controller.abort(new Error('user cancelled'));
    await expect(pending).rejects.toThrow('user cancelled');
    await waitFor(() => aborted.length === 1);
    expect(text(await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } }))).toBe('2');
  });

  it('aborts running calls and ends the bridge process when closed; its folder is removed', async () => {
    const { client, calls, aborted, transport, bridge: b } = await startRecordingBridge();
    const pid = transport.pid!;
    const closed = new Promise<void>((resolve) => (client.onclose = resolve));
    const pending = client.callTool({ name: 'slow', arguments: {} }).catch((e: unknown) => e);
    await waitFor(() => calls.length === 1);
    expect(statSync(b.dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(b.dir, 'connect.json')).mode & 0o777).toBe(0o600);
    await b.close();
    await closed;
    expect(await pending).toBeInstanceOf(Error);
    expect(aborted).toEqual(['slow']);
    await waitFor(() => !alive(pid));
    expect(existsSync(b.dir)).toBe(false);
  });

  it('drops a connection that does not send the secret', async () => {
    const { bridge: b } = await startRecordingBridge();
    const { port } = JSON.parse(readFileSync(join(b.dir, 'connect.json'), 'utf8')) as { port: number };
    expect(port).toBe(b.port);
    const socket = connect({ host: '127.0.0.1', port });
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(`${'0'.repeat(64)}\n${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`);
    await closed;
    expect(Buffer.concat(received).length).toBe(0);
    expect(b.connections).toBe(1); // only the real client
  });
});

describe('the bridge\'s connection', () => {
  it('skips a line that is not JSON-RPC and goes on serving', async () => {
    const { bridge: b } = await startRecordingBridge();
    const { port, token } = JSON.parse(readFileSync(join(b.dir, 'connect.json'), 'utf8')) as { port: number; token: string };
    const socket = connect({ host: '127.0.0.1', port });
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('utf8')));
    const initialize = { jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    // The secret, a broken line, then a request split over two writes.
    socket.write(`${token}\nnot json at all\n${JSON.stringify(initialize).slice(0, 20)}`);
    socket.write(`${JSON.stringify(initialize).slice(20)}\r\n`);
    await waitFor(() => received.includes('\n'));
    socket.destroy();
    expect(JSON.parse(received.split('\n')[0]!)).toMatchObject({ jsonrpc: '2.0', id: 7, result: { serverInfo: { name: 'troupe' } } });
  });

  it('closes a connection that has not sent the secret by its deadline, counted from when it was accepted', async () => {
    const clock = new SimulatedClock();
    const { bridge: b } = await startRecordingBridge({ clock, authTimeoutMs: 1_000 });
    const early = idleSockets(b.port, 1);
    await waitFor(() => b.pending === 1);
    await clock.advance(600);
    // The second sends half a secret and no line end: still not authenticated.
    const late = idleSockets(b.port, 1);
    late.sockets[0]!.write('0'.repeat(40));
    await waitFor(() => b.pending === 2);
    await clock.advance(400);
    await waitFor(() => early.closed === 1);
    expect(late.closed).toBe(0);
    expect(b.pending).toBe(1);
    await clock.advance(599);
    expect(late.closed).toBe(0);
    await clock.advance(1);
    await waitFor(() => late.closed === 1);
    expect(b.pending).toBe(0);
    expect(b.connections).toBe(1); // the real client, never timed out
  });

  it('closes the oldest waiting connection when one more than `maxPendingConnections` arrives', async () => {
    const clock = new SimulatedClock();
    const { bridge: b } = await startRecordingBridge({ clock, maxPendingConnections: 2 });
    const first = idleSockets(b.port, 1);
    await waitFor(() => b.pending === 1);
    const second = idleSockets(b.port, 1);
    await waitFor(() => b.pending === 2);
    const third = idleSockets(b.port, 1);
    await waitFor(() => first.closed === 1);
    await waitFor(() => third.connected === 1);
    expect([second.closed, third.closed, b.pending]).toEqual([0, 0, 2]);
    expect(b.connections).toBe(1);
  });

  it('keeps serving its client while 1,100 idle connections come and go: the oldest waiting ones close beyond the cap, the rest at the deadline', { timeout: 120_000 }, async () => {
    const clock = new SimulatedClock();
    const { bridge: b, calls, connectNow } = await openBridge({ clock });
    const idle = await manyIdleSockets(b.port, 1_100);
    await waitFor(() => idle.closed >= 1_100 - DEFAULT_BRIDGE_MAX_PENDING, 3_000);
    expect(b.pending).toBe(DEFAULT_BRIDGE_MAX_PENDING);
    expect(idle.closed).toBe(1_100 - DEFAULT_BRIDGE_MAX_PENDING);

    const { client: c } = await connectNow();
    expect(text(await c.callTool({ name: 'add', arguments: { a: 2, b: 3 } }))).toBe('5');
    expect(calls.map((call) => call.name)).toEqual(['add']);
    expect(b.connections).toBe(1);
    // The client's connection made room by closing the oldest waiting one.
    expect(b.pending).toBe(DEFAULT_BRIDGE_MAX_PENDING - 1);

    await clock.advance(DEFAULT_BRIDGE_AUTH_TIMEOUT_MS);
    await waitFor(() => idle.closed === 1_100, 3_000);
    expect(b.pending).toBe(0);
    expect(text(await c.callTool({ name: 'add', arguments: { a: 40, b: 2 } }))).toBe('42');
    expect(b.connections).toBe(1);
  });

  it('refuses a deadline or a cap that is not a positive number', async () => {
    await expect(startToolBridge({ tools, call: async () => ({ content: '' }), authTimeoutMs: 0 })).rejects.toMatchObject({ code: 'invalid_option' });
    await expect(startToolBridge({ tools, call: async () => ({ content: '' }), maxPendingConnections: 1.5 })).rejects.toMatchObject({ code: 'invalid_option' });
  });

  it('refuses to start once aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(startToolBridge({ tools, call: async () => ({ content: '' }), signal: controller.signal })).rejects.toThrow('stop');
  });
});

describe('serveTools', () => {
  const add = defineTool({
    name: 'add',
    description: 'Add two numbers',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => a + b,
  }) as ToolDefinition;
  let cancelled = 0;
  const wait = defineTool({
    name: 'wait',
    description: 'Waits until cancelled',
    parameters: z.object({}),
    execute: (_args, { signal }) =>
      new Promise((_resolve, reject) => signal.addEventListener('abort', () => (cancelled++, reject(signal.reason as Error)), { once: true })),
  }) as ToolDefinition;

  it('executes calls as the tool loop does: validated, with events, cancellable', async () => {
    const events: TroupeEvent[] = [];
    const host = defineRunnable({
      name: 'mcp-host',
      kind: 'custom',
      async run(_input, ctx) {
        const server = await serveTools([add, wait], { ctx, agent: 'remote' });
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        await server.connect(serverSide);
        const c = new Client({ name: 'test-client', version: '1.0.0' });
        await c.connect(clientSide);
        const listed = await c.listTools();
        const sum = text(await c.callTool({ name: 'add', arguments: { a: 2, b: 40 } }));
        const invalid = await c.callTool({ name: 'add', arguments: { a: 'two' } });
        const controller = new AbortController();
        const waiting = c.callTool({ name: 'wait', arguments: {} }, undefined, { signal: controller.signal }).catch((e: unknown) => e);
        await waitFor(() => events.some((e) => e.type === 'tool.called' && e.call.name === 'wait'));
        controller.abort(new Error('stop'));
        await waiting;
        await waitFor(() => cancelled === 1);
        await c.close();
        await server.close();
        return {
          output: JSON.stringify({ names: listed.tools.map((t) => t.name), sum, invalid: text(invalid), isError: invalid.isError }),
          agent: 'mcp-host',
          status: 'completed',
        };
      },
    });
    const result = await run(host, 'serve', { onEvent: (e) => events.push(e) });
    expect(JSON.parse(result.output)).toEqual({
      names: ['add', 'wait'],
      sum: '42',
      invalid: expect.stringMatching(/^Error: invalid arguments for "add": a: /),
      isError: true,
    });
    const completed = events.filter((e): e is TroupeEvent<'tool.completed'> => e.type === 'tool.completed');
    expect(completed.map((e) => [e.agent, e.name, e.isError])).toEqual([
      ['remote', 'add', false],
      ['remote', 'add', true],
    ]);
    expect(cancelled).toBe(1);
  });

  it('refuses two tools of one name', async () => {
    const host = defineRunnable({
      name: 'mcp-host',
      kind: 'custom',
      async run(_input, ctx) {
        await serveTools([add, add], { ctx });
        return { output: '', agent: 'x', status: 'completed' };
      },
    });
    await expect(run(host, 'serve')).rejects.toMatchObject({ code: 'invalid_option', message: 'serveTools: tool "add" is given twice' });
  });
});

/** True while `pid` runs (a zombie waiting to be reaped counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Poll on real time: the other side is another process or the SDK's own queue. */
async function waitFor(check: () => boolean, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not met in time');
}
