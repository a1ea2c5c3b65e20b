/**
 * A small web service on troupe/http: a person starts a plan, watches its
 * chunks move live, and approves the one tool call that writes a file. The
 * whole service is this file and `page.ts`; `main.ts` serves it on
 * node:http. Offline on the scripted adapter; set TROUPE_ADAPTER (see
 * troupe/adapters/env) to run it on a real model.
 */
import { defineTool, startRun, type RunHandle, type Store } from 'troupe';
import { ApprovalQueue } from 'troupe/guardrails';
import { planRunnable, type Plan } from 'troupe/plan';
import { memoryStore } from 'troupe/persistence';
import { adapterFromEnv } from 'troupe/adapters/env';
import { cancellationSignal, remoteApprovals, runHandler, type Principal } from 'troupe/http';
import { scriptedAdapter } from 'troupe/testing';
import { z } from 'zod';
import { page } from './page.js';

/** The plan every run executes (a planner would write it; see examples/memory-leaks.ts). */
export const releasePlan: Plan = {
  planSummary: 'Prepare the release notes: gather the changes, write the file, check it.',
  chunks: [
    { sequenceIndex: 0, title: 'Gather the changes', prompt: 'List the user-facing changes since the last release.', dependsOnIndexes: [], complexity: 'Low', role: 'CodeAnalysis' },
    { sequenceIndex: 1, title: 'Write RELEASE.md', prompt: 'Write the release notes to RELEASE.md with the write_file tool.', dependsOnIndexes: [0], complexity: 'Medium', role: 'Implementation' },
    { sequenceIndex: 2, title: 'Check the notes', prompt: 'Check the notes for missing changes.', dependsOnIndexes: [1], complexity: 'Low', role: 'Testing' },
  ],
};

/** Demo credentials: a token per person, each in a tenant. Use your own sign-in (a session cookie) in a real service. */
const people: Record<string, Principal> = { demo: { tenant: 'demo', subject: 'you' }, other: { tenant: 'other-team', subject: 'them' } };

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Where runs, requests and approvals live. Default: a memory store (a file or Redis store lets several processes serve). */
  store?: Store;
  /** Latency of every scripted model turn, in ms, so progress is visible. Default: 400. */
  latencyMs?: number;
}

/** The service: a web-standard handler (the page at `/`, the API under `/api`) and what it wrote. */
export function createApp(options: AppOptions = {}) {
  const store = options.store ?? memoryStore();
  const files = new Map<string, string>();
  const runs = new Map<string, RunHandle>();
  const writeFile = defineTool({
    name: 'write_file',
    description: 'Write a file of the repository.',
    parameters: z.object({ path: z.string(), content: z.string() }),
    execute: ({ path, content }) => {
      files.set(path, content);
      return `wrote ${content.length} characters to ${path}`;
    },
  });
  const adapter =
    adapterFromEnv() ??
    scriptedAdapter({
      latencyMs: options.latencyMs ?? 400,
      rules: [
        { agent: 'CodeAnalysis', reply: 'Changes: live event streams, remote approvals, rate limits.' },
        {
          agent: 'Implementation',
          reply: (r) =>
            r.turn === 1
              ? { text: 'Writing the notes.', toolCalls: [{ name: 'write_file', arguments: { path: 'RELEASE.md', content: '# Release\n\n- Live event streams\n- Remote approvals\n- Rate limits\n' } }] }
              : r.text.includes('Not approved') ? 'The file was not written: the write was denied.' : 'RELEASE.md is written.',
        },
        { agent: 'Testing', reply: 'The notes list every change.' },
      ],
    });

  const api = runHandler({
    store,
    basePath: '/api',
    // EventSource cannot send headers: the demo reads the token from the query string or the header.
    authorize: (request) => {
      const token = new URL(request.url).searchParams.get('token') ?? request.headers.get('authorization')?.replace('Bearer ', '');
      if (!token) return null;
      return people[token] ?? { status: 403, message: 'Unknown token' };
    },
    start: ({ store: tenantStore, runId, input }) => {
      const approvals = new ApprovalQueue({ handler: remoteApprovals(), store: tenantStore });
      const watch = cancellationSignal(runId, { store: tenantStore });
      const handle = startRun(planRunnable(releasePlan, { adapter, tools: [writeFile], approvals, planId: 'release' }), input, { store: tenantStore, runId, signal: watch.signal });
      runs.set(runId, handle);
      void handle.result.catch(() => undefined).finally(() => watch.close());
    },
  });

  return {
    store,
    /** Files the `write_file` tool wrote. */
    files,
    /** Runs started by this process. */
    runs,
    async handle(request: Request): Promise<Response> {
      const { pathname } = new URL(request.url);
      if (request.method === 'GET' && pathname === '/') return new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } });
      return api(request);
    },
  };
}
