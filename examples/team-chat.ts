/**
 * The team chat in a page of your own, served by a ten-line Node server:
 * `<troupe-team-chat endpoint="/api">` talks to troupe/http's run routes,
 * and the server serves the page, the interface's script and those routes.
 * Type a task in the page: the lead plans, shows the plan, and runs it.
 *
 *   npx tsx examples/team-chat.ts --serve    # open the URL it prints; Ctrl-C stops it
 *   npx tsx examples/team-chat.ts            # start, check the page, run a task over HTTP, stop
 *
 * Offline on the scripted adapter; TROUPE_ADAPTER names a real model.
 */
import type { AddressInfo } from 'node:net';
import { adapterFromEnv } from 'troupe/adapters/env';
import { PlanningSession } from 'troupe/plan';
import { memoryStore, scriptedAdapter } from 'troupe/testing';
import { cancellationSignal, runHandler, runPlanningSession, createNodeServer, type StartRunRequest } from 'troupe/http';
import { uiScriptResponse } from 'troupe/ui';

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Our team</title><link rel="icon" href="data:,">
<script type="module" src="/troupe-ui.js"></script></head>
<body style="margin:0;height:100vh;display:grid;grid-template-rows:auto 1fr;font-family:system-ui">
  <header style="padding:0.75rem 1rem"><strong>Our release team</strong></header>
  <troupe-team-chat endpoint="/api" style="margin:0 1rem 1rem"></troupe-team-chat>
</body>
</html>`;

const plan = { planSummary: 'Prepare the release', chunks: [{ sequenceIndex: 0, title: 'Write the release notes', prompt: 'List every change since the last release.', dependsOnIndexes: [], complexity: 'Low', role: 'Implementation' }] };
const adapter =
  adapterFromEnv() ??
  scriptedAdapter({
    replies: { planner: ['{"action":"plan"}', JSON.stringify(plan)], Implementation: [{ chunks: ['The notes ', 'list every ', 'change.'], chunkDelayMs: 100 }] },
    rules: [{ agent: 'synthesis', reply: 'The release notes are ready.' }],
  });

/** A task typed in the page starts a planning session: its questions and plan are answered in the page. */
function start({ store, runId, input }: StartRunRequest): void {
  const watch = cancellationSignal(runId, { store });
  void runPlanningSession(new PlanningSession({ adapter, runId }), input, { store, signal: watch.signal })
    .catch(() => undefined)
    .finally(() => watch.close());
}

// The server: ten lines.
const api = runHandler({ store: memoryStore(), authorize: () => ({ tenant: 'demo' }), basePath: '/api', start });
const server = createNodeServer(async (request) => {
  const { pathname } = new URL(request.url);
  if (pathname.startsWith('/api/')) return api(request);
  if (pathname === '/troupe-ui.js') return uiScriptResponse(request);
  return new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } });
});
await new Promise<void>((resolve) => server.listen(process.argv.includes('--serve') ? Number(process.env.PORT ?? 8788) : 0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
console.log(`listening on ${url}`);
const stop = () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
process.once('SIGINT', () => void stop());

if (!process.argv.includes('--serve')) {
  // What the page does, over HTTP: load, start a task, follow it, approve the plan.
  const page = await fetch(url);
  console.log(`page: ${page.status}, ${(await page.text()).includes('<troupe-team-chat endpoint="/api"') ? 'with the team chat' : 'without the team chat'}`);
  const script = await fetch(`${url}troupe-ui.js`);
  console.log(`script: ${script.status}, ${script.headers.get('content-type')}, ${Math.round((await script.arrayBuffer()).byteLength / 1024)} KB`);
  const post = (path: string, body: unknown) => fetch(`${url}api${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const { runId } = (await (await post('/runs', { input: 'Prepare the release' })).json()) as { runId: string };
  console.log('started a run');
  const events = await fetch(`${url}api/runs/${runId}/events`);
  const reader = events.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (let done = false; !done; ) {
    const chunk = await reader.read();
    if (chunk.done) break;
    buffer += chunk.value;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const data = buffer.slice(0, end).split('\n').find((line) => line.startsWith('data: '));
      buffer = buffer.slice(end + 2);
      if (!data) continue;
      const event = JSON.parse(data.slice(6)) as { type: string; kind?: string; requestId?: string; plan?: { chunks: unknown[] }; to?: string; output?: string };
      if (event.type === 'input.requested' && event.kind === 'plan-approval') {
        const answered = await post(`/runs/${runId}/requests/${event.requestId}`, { decision: 'approve' });
        console.log(`plan of ${event.plan?.chunks.length} chunk(s): approved (${answered.status})`);
      }
      if (event.type === 'phase.changed') console.log(`phase: ${event.to}`);
      if (event.type === 'run.completed') {
        console.log(`answer: ${event.output}`);
        done = true;
        break;
      }
    }
  }
  await reader.cancel();
  await stop();
  console.log('stopped');
}
