// What the tests of the real coding-agent CLIs share (test/adapters/process-cli-*.test.ts):
// the CLIs found in test/cli-rigs, a tool, scripted workers, the mock servers to close, and
// readers of what a CLI sent.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { z } from 'zod';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { walk } from '../../src/core/ops.js';
import { defineTool, type ToolDefinition } from '../../src/core/tools.js';
import { agent } from '../../src/patterns/agent.js';
import { type AnthropicRequest } from './mock-anthropic.js';
import { ticketServerBundle } from './bundle.js';
import { tempDirs } from './temp-dirs.js';

export const clis = inject('clis');
export const tempDir = tempDirs('troupe-cli-test-');

/** The ticket server's configuration and the calls it got; `startDelayMs`: it loads that much later (a server slower than the CLI). */
export function ticketServerFor({ startDelayMs = 0 }: { startDelayMs?: number } = {}) {
  const log = join(tempDir(), 'calls.jsonl');
  // The examples' ticket server (examples/cli/ticket-server.mjs), bundled with the MCP SDK: half the CPU a start.
  const ticketServer = ticketServerBundle();
  const args = startDelayMs > 0 ? ['-e', `setTimeout(() => import(${JSON.stringify(ticketServer)}), ${startDelayMs})`, 'ticket-server', log] : [ticketServer, log];
  const config = { command: process.execPath, args, env: { TICKET_STATUS: 'printer on fire' } };
  const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown) : []);
  return { config, calls };
}
// A real CLI starts in about a second; a loaded machine may take longer.
export const SLOW = { timeout: 60_000 };
/** Two runs of a real CLI (Copilot takes 15 s a run on a loaded machine). */
export const TWICE = { timeout: 120_000 };

export const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
}) as ToolDefinition;

export const workers = () => [agent({ name: 'coder', description: 'writes code' }), agent({ name: 'tester', description: 'writes tests' })];
export const workerReplies = () =>
  scriptedAdapter({
    rules: [
      { agent: 'coder', reply: 'wrote parse()' },
      { agent: 'tester', reply: 'wrote 3 tests' },
    ],
  });

/** The mock model servers a test started; {@link closeMocks} closes them after each test. */
export const mocks: Array<{ close(): Promise<void> }> = [];
export async function closeMocks(): Promise<void> {
  await Promise.all(mocks.splice(0).map((m) => m.close()));
}

/**
 * The processes this test process started, and theirs: the CLI and its MCP bridge (zombies left out).
 * Other test files of the worker may have processes of their own: a test waits for those it saw start.
 */
export function descendants(): number[] {
  const parentOf = new Map<number, number>();
  if (existsSync('/proc')) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (fields[0] !== 'Z') parentOf.set(Number(entry), Number(fields[1]));
      } catch {
        // gone meanwhile
      }
    }
  } else {
    for (const line of execFileSync('ps', ['-A', '-o', 'pid=,ppid=,stat='], { encoding: 'utf8' }).split('\n')) {
      const [pid, ppid, stat] = line.trim().split(/\s+/);
      if (pid && ppid && !stat?.startsWith('Z')) parentOf.set(Number(pid), Number(ppid));
    }
  }
  const found: number[] = [];
  const visit = (pid: number) => {
    for (const [child, parent] of parentOf) if (parent === pid) (found.push(child), visit(child));
  };
  visit(process.pid);
  return found;
}

export const warningsOf = (events: TroupeEvent[]) => events.filter((e): e is TroupeEvent<'warning'> => e.type === 'warning');
/** The text of an Anthropic request's system prompt (a string or text blocks). */
export const systemText = (request: AnthropicRequest | undefined) => {
  const system = request?.body['system'];
  return typeof system === 'string' ? system : Array.isArray(system) ? system.map((b: { text?: string }) => b.text ?? '').join('\n') : '';
};
export const toolCallTurns = (events: TroupeEvent[], name: string) =>
  events.filter((e): e is TroupeEvent<'agent.turn'> => e.type === 'agent.turn' && e.agent === name).map((e) => e.toolCalls);
export const nestedWorkers = (trace: Parameters<typeof walk>[0]) => {
  const found: string[] = [];
  walk(trace, (node) => {
    for (const child of node.children) if (child.kind === 'worker') found.push(`${node.kind} > ${child.name}`);
  });
  return found.sort();
};

