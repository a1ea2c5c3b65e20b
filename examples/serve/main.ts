/**
 * Serve the example on node:http:
 *
 *   npx tsx examples/serve/main.ts            # http://127.0.0.1:8787/?token=demo
 *   PORT=0 npx tsx examples/serve/main.ts     # any free port
 *
 * With --check it starts on a free port, runs the plan through its own
 * HTTP API (start, stream, approve the tool call), prints what happened
 * and stops: what the examples test runs.
 */
import type { AddressInfo } from 'node:net';
import { createNodeServer } from 'troupe/http';
import { createApp } from './app.js';

const check = process.argv.includes('--check');
const app = createApp(check ? { latencyMs: 20 } : {});
const server = createNodeServer((request) => app.handle(request));
const port = check ? 0 : Number(process.env.PORT ?? 8787);
await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
console.log(`listening on ${url}/?token=demo`);

const stop = () =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());

if (check) {
  const api = (path: string) => `${url}/api${path}${path.includes('?') ? '&' : '?'}token=demo`;
  const page = await fetch(`${url}/`);
  console.log(`page: ${page.status} ${(await page.text()).includes('EventSource') ? 'with its event stream' : ''}`);
  const started = await fetch(api('/runs'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'Prepare the release notes' }) });
  const { runId } = (await started.json()) as { runId: string };
  console.log(`started run ${runId}: ${started.status}`);
  const events = await fetch(api(`/runs/${runId}/events`));
  const reader = events.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let seen = 0;
  outer: for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split('\n').find((l) => l.startsWith('data: '));
      if (!data) continue;
      const event = JSON.parse(data.slice(6)) as { type: string; kind?: string; requestId?: string; tool?: string; title?: string; status?: string; output?: string };
      seen++;
      if (event.type === 'chunk.status') console.log(`chunk "${event.title}": ${event.status}`);
      if (event.type === 'input.requested' && event.kind === 'approval') {
        const answered = await fetch(api(`/runs/${runId}/requests/${event.requestId}`), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ approved: true }) });
        console.log(`approval of ${event.tool} requested; approved: ${answered.status}`);
      }
      if (event.type === 'run.completed') {
        console.log(`run completed after ${seen} events: ${event.output}`);
        break outer;
      }
    }
  }
  await reader.cancel();
  console.log(`files written: ${[...app.files.keys()].join(', ')}`);
  await stop();
  console.log('stopped');
}
