// The team chat in headless Chromium beyond the planning flow: a run
// stopped from the page (Escape twice), a stream cut twice and resumed
// with nothing lost or shown twice, hostile Markdown in model output that
// stays inert (no script runs, no request leaves the page), AG-UI (troupe's
// endpoint with interrupts answered in the page, and a bare AG-UI server),
// and thousands of messages kept in a virtualised list under a cap.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Page } from 'playwright-core';
import { scriptedAdapter } from 'troupe/testing';
import { readRun } from 'troupe/persistence';
import { namespacedStore } from 'troupe/http';
import { uiScriptResponse } from 'troupe/ui';
import { ChatModel } from '../../src/ui/model.js';
import { TroupeEventReader } from '../../src/ui/troupe-events.js';
import { offlineAdapter } from '../../src/cli/dev.js';
import { launchChromium } from '../helpers/chromium.js';
import { startServer, type TestServer } from '../helpers/http-server.js';
import { chromiumFor, devServer, expectAccessible, shot, waitForChat, watchProblems } from './browser.js';

const executable = chromiumFor('Interface browser test (chat)');

/** A page with one team chat and no Content-Security-Policy: what the elements do on their own. */
const chatPage = (attributes: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>chat</title><link rel="icon" href="data:,">
<script type="module" src="/troupe-ui.js"></script></head>
<body style="margin:0;height:100vh"><troupe-team-chat ${attributes} style="height:100vh"></troupe-team-chat></body></html>`;

/** A 1x1 PNG. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** Serve `page` at /page.html, the script, a pixel at /allowed.png, and everything else from `fallback`. */
function withPage(page: string, fallback: (request: Request) => Promise<Response>) {
  return async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    if (pathname === '/page.html') return new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } });
    if (pathname === '/troupe-ui.js') return uiScriptResponse(request);
    if (pathname === '/allowed.png') return new Response(PIXEL, { headers: { 'content-type': 'image/png' } });
    return fallback(request);
  };
}

async function chatEval<T>(page: Page, fn: string): Promise<T> {
  return page.evaluate(`(() => { const chat = document.querySelector('troupe-team-chat'); return (${fn})(chat); })()`) as Promise<T>;
}

describe.skipIf(!executable)('the team chat in headless Chromium', () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    browser = await launchChromium(executable!);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    for (const s of servers) await s.close();
  });

  it('stops a run from the page: Escape twice on an empty box', { timeout: 180_000 }, async () => {
    const plan = { planSummary: 'Slow work', chunks: [{ sequenceIndex: 0, title: 'Think for ever', prompt: 'Think about it for a very long time.', dependsOnIndexes: [], complexity: 'High', role: 'Generic' }] };
    const adapter = scriptedAdapter({ replies: { planner: ['{"action":"plan"}', JSON.stringify(plan)], Generic: [{ fault: 'hang' }] } });
    const { server, store } = await devServer({ adapter });
    servers.push(server);
    const page = await browser.context.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(server.url);
    const box = page.locator('troupe-input-bar textarea');
    await box.fill('Think');
    await box.press('Enter');
    await page.locator('troupe-plan-review button', { hasText: 'Approve' }).first().click();
    await page.locator('troupe-worker-bar .pill[data-status="running"]').waitFor();
    expect(await page.locator('troupe-input-bar button', { hasText: 'Stop' }).isVisible()).toBe(true);
    await box.focus();
    await box.press('Escape');
    await expect.poll(() => page.locator('troupe-input-bar [role=status]').textContent()).toBe('Press Escape again to stop the run.');
    await box.press('Escape');
    const state = await waitForChat(page, (s) => s.status === 'cancelled');
    expect(state.messages.at(-1)).toMatchObject({ source: 'system', text: 'The run was cancelled.' });
    const log = await readRun(state.runId!, { store: namespacedStore(store, 'local') });
    expect(log.events.at(-1)).toMatchObject({ type: 'run.failed', code: 'cancelled' });
    await shot(page, 'cancelled');
    await expectAccessible(page, 'a run stopped from the page');
    await page.close();
  });

  it('resumes a stream cut twice: every event of the log shown once, in order', { timeout: 180_000 }, async () => {
    const plan = { planSummary: 'Stream', chunks: [0, 1, 2].map((i) => ({ sequenceIndex: i, title: `Part ${i}`, prompt: `Write part ${i} of the text.`, dependsOnIndexes: [], complexity: 'Low', role: 'Generic' })) };
    const words = Array.from({ length: 12 }, (_, i) => `word${i} `);
    const adapter = scriptedAdapter({ replies: { planner: ['{"action":"plan"}', JSON.stringify(plan)] }, rules: [{ agent: 'Generic', reply: { chunks: words, chunkDelayMs: 120 } }, { agent: 'synthesis', reply: 'All parts written.' }] });
    const { server, store } = await devServer({ adapter });
    servers.push(server);
    const page = await browser.context.newPage();
    page.setDefaultTimeout(60_000);
    const problems = watchProblems(page);
    await page.goto(server.url);
    await page.locator('troupe-input-bar textarea').fill('Write three parts');
    await page.locator('troupe-input-bar textarea').press('Enter');
    await page.locator('troupe-plan-review button', { hasText: 'Approve' }).first().click();
    await page.locator('troupe-worker-bar .pill[data-status="running"]').first().waitFor();
    server.dropConnections();
    await page.waitForTimeout(500);
    server.dropConnections();
    const state = await waitForChat(page, (s) => s.status === 'completed', 40_000);
    const log = await readRun(state.runId!, { store: namespacedStore(store, 'local') });
    expect(state.lastSeq).toBe(log.events.length - 1);
    // The page shows what a reader of the whole log in one go shows: nothing lost, nothing twice.
    const model = new ChatModel();
    const reader = new TroupeEventReader(model);
    log.events.forEach((e, seq) => reader.apply(seq, e));
    const lines = (messages: Array<{ source: string; author: string; text: string; kind: string }>) => messages.map((m) => `${m.source}|${m.author}|${m.kind}|${m.text}`);
    expect(lines(state.messages)).toEqual(lines(model.messages));
    expect(state.messages.filter((m) => m.text.startsWith('word0')).length).toBe(3);
    // EventSource reports each cut connection; nothing else went wrong.
    expect(problems.filter((p) => !p.includes('net::ERR_') && !p.includes('EventSource'))).toEqual([]);
    await page.close();
  });

  it('renders hostile Markdown inert: no script runs, no request leaves the page', { timeout: 180_000 }, async () => {
    const { server: dev, handle } = await devServer({ adapter: scriptedAdapter() });
    servers.push(dev);
    const server = await startServer(withPage(chatPage('endpoint="/api" readonly'), handle));
    servers.push(server);
    const hostile = [
      '<script>window.__pwned = 1</script> and <img src=x onerror="window.__pwned = 2">',
      '[click me](javascript:window.__pwned=3) [again](JAVASCRIPT:alert(1)) [spaced]( javascript:alert(1)) [data](data:text/html,<script>alert(1)</script>) [vb](vbscript:msgbox(1))',
      '<a href="javascript:alert(1)">raw link</a> <iframe src="https://evil.example/frame"></iframe> <object data="https://evil.example/o"></object>',
      '<svg onload="window.__pwned = 4"><script>window.__pwned = 5</script><image href="https://evil.example/svg.png"/></svg>',
      '<math><mi xlink:href="javascript:alert(1)">x</mi><maction actiontype="statusline#https://evil.example">y</maction></math>',
      '![tracker](https://evil.example/pixel.png) ![port](http://127.0.0.1:1/leak.png) ![relative](//evil.example/a.png) ![local](/allowed.png)',
      '<link rel="stylesheet" href="https://evil.example/x.css"><style>@import url(https://evil.example/y.css); body { background: url(https://evil.example/z.png) }</style><meta http-equiv="refresh" content="0;url=https://evil.example">',
      '```"><img src=x onerror=window.__pwned=6>\n</code></pre><script>window.__pwned = 7</script>\n```\n\n`<img src=x onerror=alert(1)>`',
      '| a | b |\n|---|---|\n| <img src=x onerror=alert(1)> | [x](javascript:alert(1)) |',
      '[title](https://example.org/ok "t\\" onmouseover=\\"window.__pwned=8") <https://example.org/auto> &lt;script&gt;alert(1)&lt;/script&gt;',
    ];
    const page = await browser.context.newPage();
    const requests: string[] = [];
    const dialogs: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('dialog', (d) => (dialogs.push(d.message()), void d.dismiss()));
    await page.goto(`${server.url}/page.html`);
    await page.waitForFunction("customElements.get('troupe-team-chat') !== undefined");
    const events = hostile.map((text, i) => ({ seq: i, event: { type: 'agent.turn', runId: 'hostile', time: 1_700_000_000_000 + i, agent: 'writer', turn: i + 1, text, toolCalls: 0 } }));
    await chatEval(page, `(chat) => chat.ingest(${JSON.stringify(events)})`);
    await page.waitForFunction("document.querySelector('troupe-team-chat').shadowRoot.querySelectorAll('article').length >= 10");
    await page.waitForTimeout(500);
    const found = (await page.evaluate(`(() => {
      const all = [];
      const walk = (root) => {
        for (const el of root.querySelectorAll('*')) {
          all.push(el);
          if (el.shadowRoot) walk(el.shadowRoot);
        }
      };
      walk(document);
      const inMarkdown = all.filter((el) => el.closest('.md'));
      return {
        pwned: window.__pwned ?? null,
        tags: [...new Set(inMarkdown.map((el) => el.localName))].sort(),
        handlers: inMarkdown.flatMap((el) => [...el.attributes].filter((a) => a.name.startsWith('on')).map((a) => el.localName + '[' + a.name + ']')),
        hrefs: inMarkdown.filter((el) => el.localName === 'a').map((a) => a.href),
        images: inMarkdown.filter((el) => el.localName === 'img').map((i) => i.src),
        text: document.querySelector('troupe-team-chat').shadowRoot.textContent ?? '',
      };
    })()`)) as { pwned: unknown; tags: string[]; handlers: string[]; hrefs: string[]; images: string[]; text: string };
    expect(found.pwned).toBeNull();
    expect(dialogs).toEqual([]);
    expect(found.handlers).toEqual([]);
    for (const tag of ['script', 'iframe', 'object', 'svg', 'math', 'style', 'link', 'meta', 'image', 'img']) expect(found.tags, tag).not.toContain(tag);
    // Links only to the web or mail, never to script or data (a URL in text is a link: it loads nothing until followed).
    expect(found.hrefs.filter((href) => !/^(https?:|mailto:)/.test(href))).toEqual([]);
    expect(found.hrefs).toEqual(expect.arrayContaining(['https://example.org/ok', 'https://example.org/auto']));
    expect(found.images).toEqual([]);
    // The payloads are shown as what they are: text.
    expect(found.text).toContain('<script>window.__pwned = 1</script>');
    expect(found.text).toContain('[image: tracker — not loaded from evil.example]');
    expect(requests.filter((url) => !url.startsWith(server.url))).toEqual([]);
    expect(requests.map((url) => new URL(url).pathname)).toEqual(['/page.html', '/troupe-ui.js']);
    await shot(page, 'hostile');
    await expectAccessible(page, 'hostile Markdown shown as text');

    // An origin the page allows: its image loads, the others still do not.
    await page.evaluate(`document.querySelector('troupe-team-chat').setAttribute('image-origins', ${JSON.stringify(server.url)})`);
    await chatEval(page, `(chat) => chat.ingest([{ seq: 100, event: { type: 'agent.turn', runId: 'hostile', time: 1_700_000_001_000, agent: 'writer', turn: 99, text: '![chart](${server.url}/allowed.png) ![tracker](https://evil.example/again.png)', toolCalls: 0 } }])`);
    await expect.poll(() => requests.filter((u) => u.endsWith('/allowed.png')).length).toBe(1);
    expect(requests.filter((url) => !url.startsWith(server.url))).toEqual([]);
    await page.close();
  });

  it('speaks AG-UI: a planning session over troupe’s AG-UI endpoint, interrupts answered in the page', { timeout: 180_000 }, async () => {
    const plan = { planSummary: 'Greet', chunks: [{ sequenceIndex: 0, title: 'Say hello', prompt: 'Say hello to the person politely.', dependsOnIndexes: [], complexity: 'Low', role: 'Generic' }] };
    const adapter = scriptedAdapter({ replies: { planner: ['{"action":"clarify","questions":["To whom?"]}', '{"action":"plan"}', JSON.stringify(plan)], Generic: ['Hello, Ada!'] }, rules: [{ agent: 'synthesis', reply: 'Ada was greeted.' }] });
    const { server: dev, handle } = await devServer({ adapter });
    servers.push(dev);
    const server = await startServer(withPage(chatPage('protocol="ag-ui" endpoint="/api/agui"'), handle));
    servers.push(server);
    const page = await browser.context.newPage();
    page.setDefaultTimeout(60_000);
    const problems = watchProblems(page);
    await page.goto(`${server.url}/page.html`);
    const box = page.locator('troupe-input-bar textarea');
    await box.fill('Greet someone');
    await box.press('Enter');
    await waitForChat(page, (s) => s.requests.some((r) => r.kind === 'question' && r.status === 'pending'));
    await box.fill('Ada');
    await box.press('Enter');
    await page.locator('troupe-plan-review button', { hasText: 'Approve' }).first().click();
    const state = await waitForChat(page, (s) => s.status === 'completed', 40_000);
    expect(state.messages.filter((m) => m.kind === 'text').map((m) => m.text)).toEqual(expect.arrayContaining(['Greet someone', 'Ada', 'Hello, Ada!', 'Ada was greeted.']));
    expect(state.workers).toEqual([{ title: 'Say hello', status: 'completed' }]);
    await expectAccessible(page, 'an AG-UI thread');
    await shot(page, 'ag-ui');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('speaks to any AG-UI server: text streamed, steps as workers, the run’s result', { timeout: 180_000 }, async () => {
    const sse = (events: object[]) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');
    const bare = async (request: Request): Promise<Response> => {
      const input = (await request.json()) as { threadId: string; runId: string; messages: Array<{ content: string }> };
      const said = input.messages.at(-1)?.content ?? '';
      return new Response(
        sse([
          { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId },
          { type: 'STEP_STARTED', stepName: 'search' },
          { type: 'TEXT_MESSAGE_START', messageId: 'a1', role: 'assistant' },
          { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: 'You said: ' },
          { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: `**${said}**` },
          { type: 'TEXT_MESSAGE_END', messageId: 'a1' },
          { type: 'STEP_FINISHED', stepName: 'search' },
          { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId },
        ]),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    };
    const server = await startServer(withPage(chatPage('protocol="ag-ui" endpoint="/agent"'), bare));
    servers.push(server);
    const page = await browser.context.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(`${server.url}/page.html`);
    await page.locator('troupe-input-bar textarea').fill('hello');
    await page.locator('troupe-input-bar textarea').press('Enter');
    const state = await waitForChat(page, (s) => s.status === 'completed');
    expect(state.messages.map((m) => [m.source, m.text])).toEqual([
      ['user', 'hello'],
      ['lead', 'You said: **hello**'],
    ]);
    expect(state.workers).toEqual([{ title: 'search', status: 'completed' }]);
    expect(await page.locator('article[data-source="lead"] strong').textContent()).toBe('hello');
    await page.close();
  });

  it('starts a plan template from the team picker, replays its run from the history and forks it at a checkpoint', { timeout: 180_000 }, async () => {
    const folder = join(import.meta.dirname, '..', '..', 'examples', 'dev-team');
    const { server } = await devServer({ adapter: offlineAdapter([], []), folder });
    servers.push(server);
    const page = await browser.context.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(server.url);
    const picker = page.locator('troupe-team-picker');
    await picker.locator('button.entry', { hasText: 'fix-module' }).waitFor();
    expect(await picker.locator('h3').allTextContents()).toEqual(['Plan with the lead', 'Agents', 'Teams', 'Plan templates', 'Squads from the repository', 'Built-in squads', 'Your squads']);
    expect(await picker.locator('ul[aria-label="Squads from the repository"] .name').allTextContents()).toEqual(['Nostromo']);
    await picker.locator('button.entry', { hasText: 'fix-module' }).click();
    await picker.locator('label', { hasText: 'module' }).locator('input').fill('cache');
    await expectAccessible(page, 'the team picker with a template picked');
    await shot(page, 'picker');
    await picker.locator('button[type=submit]').click();
    const state = await waitForChat(page, (s) => s.status === 'completed', 120_000);
    expect(state.workers.map((w) => [w.title, w.status])).toEqual([
      ['Analyse cache', 'completed'],
      ['Fix cache', 'completed'],
      ['Test cache', 'completed'],
    ]);
    // The history replays the run with no model call, and opens the replay.
    const history = page.locator('troupe-run-history');
    await history.locator('button', { hasText: 'Refresh' }).click();
    await history.locator(`li[data-run="${state.runId}"] button`, { hasText: 'Replay' }).click();
    const replayed = await waitForChat(page, (s) => s.runId !== state.runId && s.status === 'completed', 120_000);
    expect(replayed.workers.map((w) => w.status)).toEqual(['completed', 'completed', 'completed']);
    // A fork from an earlier checkpoint of the run starts a new run from there, opens it, and the history says whence.
    await history.locator('button', { hasText: 'Refresh' }).click();
    await history.locator(`li[data-run="${state.runId}"] button`, { hasText: 'Fork' }).click();
    const form = history.locator(`li[data-run="${state.runId}"] .fork`);
    // The form lists the run's checkpoints once it has read them from the server.
    await expect.poll(() => form.locator('option').count()).toBeGreaterThan(1);
    await form.locator('select').selectOption({ index: 1 });
    await expectAccessible(page, 'the fork form');
    await form.locator('button', { hasText: 'Fork here' }).click();
    const forked = await waitForChat(page, (s) => s.runId !== state.runId && s.runId !== replayed.runId && s.status === 'completed', 120_000);
    // The chunks finished before the checkpoint are kept from the parent; the fork runs the rest.
    expect(forked.workers.length).toBeGreaterThan(0);
    expect(forked.workers.every((w) => w.status === 'completed')).toBe(true);
    await expect.poll(() => history.locator(`li[data-run="${forked.runId}"] .meta`).textContent()).toContain(`from ${state.runId}`);
    await page.close();
  });

  it('hides the worker pills two seconds after the last worker ended, on the page clock', { timeout: 180_000 }, async () => {
    const server = await startServer(withPage('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>bar</title><link rel="icon" href="data:,"><script type="module" src="/troupe-ui.js"></script></head><body><troupe-worker-bar></troupe-worker-bar></body></html>', async () => new Response('not found', { status: 404 })));
    servers.push(server);
    // A context of its own: Playwright's clock belongs to the whole context, and the other tests' pages need real time.
    const own = await browser.newContext();
    onTestFinished(() => own.close());
    const page = await own.newPage();
    // The page's timers run on a clock the test moves: the two seconds are exact, whatever the machine's load.
    await page.clock.install();
    await page.goto(`${server.url}/page.html`);
    await page.waitForFunction("customElements.get('troupe-worker-bar') !== undefined");
    await page.clock.pauseAt(Date.now() + 60_000);
    const worker = (status: string) => `{ key: 'plan/0', title: 'Write the exporter', role: 'Implementation', status: '${status}', colour: 0, turns: 1 }`;
    const set = (status: string) => page.evaluate(`(async () => { const bar = document.querySelector('troupe-worker-bar'); bar.workers = [${worker(status)}]; await bar.updateComplete; })()`);
    const shown = () => page.evaluate("document.querySelector('troupe-worker-bar').shadowRoot.querySelector('.bar') !== null");
    await set('running');
    expect(await shown()).toBe(true);
    await set('completed');
    await page.clock.runFor(1999);
    expect(await shown()).toBe(true);
    await page.clock.runFor(1);
    await page.evaluate("document.querySelector('troupe-worker-bar').updateComplete");
    expect(await shown()).toBe(false);
    // A worker that starts again shows the bar again.
    await set('running');
    expect(await shown()).toBe(true);
  });

  it('keeps thousands of messages in a virtualised list, under its cap', { timeout: 180_000 }, async () => {
    const server = await startServer(withPage(chatPage('endpoint="/api" readonly max-messages="2000"'), async () => new Response('not found', { status: 404 })));
    servers.push(server);
    const page = await browser.context.newPage();
    await page.goto(`${server.url}/page.html`);
    await page.waitForFunction("customElements.get('troupe-team-chat') !== undefined");
    await chatEval(
      page,
      `(chat) => chat.ingest(Array.from({ length: 3000 }, (_, i) => ({ seq: i, event: { type: 'agent.turn', runId: 'many', time: 1_700_000_000_000 + i, agent: 'worker-' + (i % 5), turn: i, text: 'Message **' + i + '** with \`code\` and a list:\\n- one\\n- two', toolCalls: 0 } })))`,
    );
    await page.waitForFunction("document.querySelector('troupe-team-chat').shadowRoot.querySelectorAll('article').length > 0");
    const counts = await chatEval<{ kept: number; dropped: number; rendered: number; last: string }>(page, `(chat) => ({ kept: chat.model.messages.length, dropped: chat.model.dropped, rendered: chat.shadowRoot.querySelectorAll('article').length, last: chat.shadowRoot.querySelector('article:last-of-type')?.textContent ?? '' })`);
    expect(counts.kept).toBeLessThanOrEqual(2000 + 125);
    expect(counts.kept + counts.dropped).toBe(3000);
    expect(counts.rendered).toBeLessThan(60);
    // Keyboard: Home goes to the first message kept, End back to the last (in the tab in front, as a person types:
    // a tab behind others gets no animation frames, and the list draws a far row in one).
    await page.bringToFront();
    await page.locator('troupe-team-chat article').first().focus();
    await page.keyboard.press('Home');
    await expect.poll(() => page.evaluate("document.querySelector('troupe-team-chat').shadowRoot.activeElement?.getAttribute('aria-posinset')")).toBe('1');
    await page.keyboard.press('End');
    await expect.poll(() => page.evaluate("document.querySelector('troupe-team-chat').shadowRoot.activeElement?.textContent ?? ''")).toContain('Message 2999');
    await page.close();
  });
});
