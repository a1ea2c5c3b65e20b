// Processes of the A2A and MCP interop tests: an A2A agent built with the
// A2A SDK alone (test/fixtures/a2a/sdk-agent.mjs), and the `troupe` CLI
// serving a folder (`troupe serve --a2a`, `troupe mcp serve --http`), each
// on a free port of 127.0.0.1; and messages as the SDK's client takes them.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '@a2a-js/sdk';
import { bundled, cliBundle } from './bundle.js';

const root = join(import.meta.dirname, '..', '..');
/** The `troupe` CLI as Node's arguments (its sources bundled: test/helpers/bundle.ts), so an MCP client that starts it (Claude Code) does not wait long for a server. */
export async function troupeCli(): Promise<string[]> {
  return [cliBundle()];
}
/** The folder and script the served agents come from. */
export const panelDir = join(root, 'test', 'fixtures', 'a2a', 'panel');
export const panelScript = join(root, 'test', 'fixtures', 'a2a', 'panel-script.json');

/** A child process with its output so far. */
export interface Started {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Settles once it exited. */
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after 5 s; resolves once it exited. */
  stop(): Promise<void>;
}

/** Start `args` with Node; resolves once `ready` matches its standard output. */
export async function startNode(args: string[], ready: RegExp, env: Record<string, string> = {}): Promise<Started & { match: RegExpMatchArray }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TROUPE_ADAPTER: '', ...env } });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started: Started = {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start in 30 s:\n${out}\n${err}`)), 30_000);
    const check = () => {
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve(m);
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code} before it was ready:\n${out}\n${err}`));
    });
  });
  return { ...started, match };
}

/** The SDK-built agent (bundled with the SDK: it starts in half the CPU); `log()` reads what its executor was asked. */
export async function startSdkAgent(logFile: string, args: string[] = []) {
  const started = await startNode([bundled(join(root, 'test', 'fixtures', 'a2a', 'sdk-agent.mjs')), '--port', '0', '--log', logFile, ...args], /^listening (\d+)$/m);
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { call: string; taskId: string; text?: string; followUp?: boolean }) : []);
  return { ...started, url: `http://127.0.0.1:${started.match[1]}`, log };
}

/** `troupe serve --a2a <panel>` with the panel's script; `agents` are the served agents' URLs by name. */
export async function startTroupeA2A(extra: string[] = [], folder = panelDir) {
  const started = await startNode([...(await troupeCli()), 'serve', '--a2a', folder, '--port', '0', '--script', panelScript, ...extra], /^A2A agent slowpoke: (\S+)/m);
  const agents = Object.fromEntries([...started.stdout().matchAll(/^A2A agent (\S+): (\S+)/gm)].map((m) => [m[1]!, m[2]!]));
  return { ...started, agents };
}

let ids = 0;
/** A user message of text (and, given, a data part) as the SDK's client takes it. */
export function userMessage(text: string, ids_: { taskId?: string; contextId?: string } = {}, data?: unknown): Message {
  const parts: Message['parts'] = [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }];
  if (data !== undefined) parts.push({ content: { $case: 'data', value: data }, metadata: undefined, filename: '', mediaType: 'application/json' });
  return { messageId: `m-${process.pid}-${++ids}`, contextId: ids_.contextId ?? '', taskId: ids_.taskId ?? '', role: 1, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** A send request of the SDK's client. */
export function sendParams(message: Message, configuration?: { returnImmediately?: boolean; historyLength?: number }) {
  return {
    tenant: '',
    message,
    configuration: configuration ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: configuration.returnImmediately ?? false, ...(configuration.historyLength === undefined ? {} : { historyLength: configuration.historyLength }) } : undefined,
    metadata: undefined,
  };
}
