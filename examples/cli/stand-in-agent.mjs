#!/usr/bin/env node
// A stand-in for a coding-agent CLI, written with the MCP SDK's client. It
// takes the arguments of `claude -p` that troupe's Claude Code profile uses
// (`--mcp-config <file>`, `--output-format json`, `--resume <id>`,
// `--system-prompt-file` and `--append-system-prompt-file <file>`; the
// others are ignored), reads the prompt from stdin, starts every MCP server
// of the config as Claude Code does, calls tools, and prints one JSON result
// line as `claude -p --output-format json` does.
//
// What it does with the tools:
// - by default, it acts as an orchestrator: it reads the workers from the
//   prompt's "## AVAILABLE WORKERS" list, calls `delegate_to_worker` for
//   each of them in parallel, and answers with what they returned;
// - `--steps <json>` replaces that with a list of steps, run in order:
//   {"call": name, "args": {...}}   call a tool and keep its answer
//   {"parallel": [{"call", "args"}, ...]}
//   {"callAndExit": name, "args": {...}, "code": n}   exit once the call is sent, without waiting
//     (with "withdrawFirst": ms, it first closes its MCP connections, then
//     exits that many milliseconds later: the call is withdrawn long before
//     the exit)
//   {"answer": "text"}              answer exactly this (instead of the answers so far)
//   {"hang": true}                  never finish
//   {"exit": n}                     exit with code n
// - with nothing to delegate, it answers with the first line of the prompt
//   (and of the system prompt file, when it was given one);
// - `--pids <file>` appends {"cli": pid, "servers": [pid, ...], "config": file}
//   once the servers are up (the tests check that none outlives a session).
import { appendFileSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const argv = process.argv.slice(2);
const option = (name) => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
};
const steps = option('--steps') ? JSON.parse(option('--steps')) : undefined;
const pidFile = option('--pids');
const sessionId = option('--resume') ?? `stand-in-${process.pid}`;

const prompt = readFileSync(0, 'utf8');
const config = option('--mcp-config') ? JSON.parse(readFileSync(option('--mcp-config'), 'utf8')) : { mcpServers: {} };

// Connect to every server of the config; tools are known by their bare names.
const clients = new Map();
const transports = [];
for (const [name, server] of Object.entries(config.mcpServers ?? {})) {
  const transport = new StdioClientTransport({ command: server.command, args: server.args ?? [], env: { ...process.env, ...server.env }, stderr: 'inherit' });
  const client = new Client({ name: 'stand-in-agent', version: '1.0.0' });
  await client.connect(transport);
  transports.push(transport);
  for (const tool of (await client.listTools()).tools) clients.set(tool.name, { client, server: name });
}
if (pidFile) appendFileSync(pidFile, `${JSON.stringify({ cli: process.pid, servers: transports.map((t) => t.pid), config: option('--mcp-config') })}\n`);

const call = async (name, args) => {
  // A tool no server lists goes to the first server, which answers it (as a model's stray call would be).
  const target = clients.get(name) ?? [...clients.values()][0];
  if (!target) return `no MCP server for ${name}`;
  const result = await target.client.callTool({ name, arguments: args }, undefined, { timeout: 24 * 3600_000 });
  const text = result.content.map((c) => c.text ?? '').join('');
  return result.isError ? `ERROR ${text}` : text;
};

const answers = [];
let answer;
if (steps) {
  for (const step of steps) {
    if (step.call) answers.push(`${step.call}: ${await call(step.call, step.args ?? {})}`);
    if (step.parallel) answers.push(...(await Promise.all(step.parallel.map(async (s) => `${s.call}: ${await call(s.call, s.args ?? {})}`))));
    if (step.callAndExit) {
      void call(step.callAndExit, step.args ?? {}).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (step.withdrawFirst !== undefined) {
        await Promise.all(transports.map((t) => t.close()));
        await new Promise((resolve) => setTimeout(resolve, step.withdrawFirst));
      }
      process.exit(step.code ?? 0);
    }
    if (step.answer !== undefined) answer = step.answer;
    if (step.hang) await new Promise(() => setInterval(() => undefined, 60_000));
    if (step.exit !== undefined) process.exit(step.exit);
  }
} else {
  // The orchestrator: one delegate_to_worker call per listed worker, all at once.
  const workers = [...(prompt.split('## AVAILABLE WORKERS\n')[1] ?? '').matchAll(/^- ([^:\n]+):/gm)].map((m) => m[1]);
  const request = (prompt.split('## ORIGINAL USER REQUEST\n')[1] ?? prompt).split('\n')[0];
  if (workers.length > 0 && clients.has('delegate_to_worker')) {
    const results = await Promise.all(workers.map((worker) => call('delegate_to_worker', { worker, task: `Your part of: ${request}` })));
    answers.push(...workers.map((worker, i) => `${worker}: ${results[i]}`));
  } else {
    answers.push(`nothing to delegate in: ${prompt.trim().split('\n')[0]}`);
    const systemFile = option('--system-prompt-file') ?? option('--append-system-prompt-file');
    const system = systemFile ? readFileSync(systemFile, 'utf8').trim().split('\n')[0] : '';
    if (system) answers.push(`system prompt (${option('--system-prompt-file') ? 'replacing' : 'appended'}): ${system}`);
  }
}

const result = answer ?? `Synthesis\n${answers.join('\n')}`;
process.stdout.write(`${JSON.stringify({
  type: 'result',
  subtype: 'success',
  is_error: false,
  result,
  session_id: sessionId,
  usage: { input_tokens: Math.ceil(prompt.length / 4), output_tokens: Math.ceil(result.length / 4) },
})}\n`);
await Promise.all(transports.map((t) => t.close()));
process.exit(0);
