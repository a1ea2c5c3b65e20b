/**
 * The team interface under load (`npm run bench -- ui`): a team chat in
 * headless Chromium holding 5,000 messages while 8 workers stream their
 * answers (a text delta every 40 ms each, a new turn every 2 s) and the
 * reader scrolls through the history. Chromium's frame-rate limit is off,
 * so a frame's duration is the work it took, not the display's refresh:
 * the median frame and the longest frame while streaming and scrolling,
 * and the page's JS heap and DOM nodes at the end. Goal: median under
 * 16 ms, no frame over 100 ms. Needs Chromium (`/usr/bin/chromium` or
 * CHROMIUM_PATH).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { uiScriptResponse } from 'troupe/ui';
import { findChromium } from '../test/helpers/chromium.js';
import { startServer } from '../test/helpers/http-server.js';

const MESSAGES = 5000;
const WORKERS = 8;
const SECONDS = 10;

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>bench</title><link rel="icon" href="data:,">
<script type="module" src="/troupe-ui.js"></script></head>
<body style="margin:0;height:100vh"><troupe-team-chat endpoint="/api" readonly max-messages="${MESSAGES + 1000}" style="height:100vh"></troupe-team-chat></body></html>`;

/** What runs in the page first: the history. */
const SCENARIO = `async ({ messages, workers, seconds }) => {
  const chat = document.querySelector('troupe-team-chat');
  const text = (i) => 'Worker ' + (i % ${WORKERS}) + ' reports on **item ' + i + '**: the cache keeps entries after their expiry.\\n\\n- checked \`src/cache.ts\`\\n- wrote a test\\n\\n\`\`\`ts\\nexport function evict(now: number) { return entries.filter((e) => e.expires > now); }\\n\`\`\`';
  let seq = 0;
  const t0 = 1700000000000;
  const history = [];
  for (let w = 0; w < workers; w++) history.push({ seq: seq++, event: { type: 'chunk.status', runId: 'b', time: t0, planId: 'p', chunkId: String(w), sequenceIndex: w, title: 'Part ' + w, role: 'Implementation', attempt: 1, status: 'running', previous: 'queued' } });
  for (let w = 0; w < workers; w++) history.push({ seq: seq++, event: { type: 'op.started', runId: 'b', time: t0, opId: 'op-' + w, kind: 'agent', name: 'Implementation', agent: 'Implementation', depth: 3, path: '/plan:p#0/chunk-' + w + '/agent:Implementation#0' } });
  for (let i = 0; i < messages; i++) history.push({ seq: seq++, event: { type: 'agent.turn', runId: 'b', time: t0 + i, opId: 'op-' + (i % workers), agent: 'Implementation', turn: i, text: text(i), toolCalls: 0 } });
  chat.ingest(history);
  await new Promise((r) => setTimeout(r, 1500));
  window.__bench = { seq, turn: messages };
}`;

/** Then: streaming and scrolling while frames are timed. */
const STREAM = `async ({ messages, workers, seconds }) => {
  const chat = document.querySelector('troupe-team-chat');
  const text = (i) => 'Worker ' + (i % ${WORKERS}) + ' reports on **item ' + i + '**: the cache keeps entries after their expiry.\\n\\n- checked \`src/cache.ts\`\\n- wrote a test\\n\\n\`\`\`ts\\nexport function evict(now: number) { return entries.filter((e) => e.expires > now); }\\n\`\`\`';
  let { seq, turn } = window.__bench;
  const t0 = 1700000000000;
  const frames = [];
  let last = performance.now();
  let running = true;
  const tick = (now) => { frames.push(now - last); last = now; if (running) requestAnimationFrame(tick); };
  requestAnimationFrame((now) => { last = now; requestAnimationFrame(tick); });
  const start = performance.now();
  const stream = setInterval(() => {
    const events = [];
    const elapsed = performance.now() - start;
    for (let w = 0; w < workers; w++) {
      if (Math.floor(elapsed / 2000) !== Math.floor((elapsed - 40) / 2000)) events.push({ seq: seq++, event: { type: 'agent.turn', runId: 'b', time: t0 + turn, opId: 'op-' + w, agent: 'Implementation', turn: turn++, text: text(turn), toolCalls: 0 } });
      else events.push({ seq: seq++, event: { type: 'session.event', runId: 'b', time: t0 + turn, opId: 'op-' + w, agent: 'Implementation', sessionId: 's' + w, event: { type: 'text-delta', text: 'more words ' + seq + ' ' } } });
    }
    chat.ingest(events);
  }, 40);
  const scroller = chat.shadowRoot.querySelector('.scroller');
  const scroll = setInterval(() => {
    const phase = (performance.now() - start) / 1000;
    // Half the time the reader scrolls back through the history, then returns to the end.
    if (phase % 4 < 2) scroller.scrollTop = Math.max(0, scroller.scrollTop - 600);
    else scroller.scrollTop = scroller.scrollHeight;
  }, 50);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  running = false;
  clearInterval(stream);
  clearInterval(scroll);
  return { frames: frames.slice(1), kept: chat.model.messages.length, rendered: chat.shadowRoot.querySelectorAll('article').length };
}`;

export default async function bench(): Promise<void> {
  const executable = findChromium();
  if (!executable) {
    console.log('Skipped: Chromium not found (install `chromium` or set CHROMIUM_PATH).');
    return;
  }
  const server = await startServer(async (request) => {
    const { pathname } = new URL(request.url);
    if (pathname === '/troupe-ui.js') return uiScriptResponse(request);
    if (pathname === '/') return new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } });
    return new Response('not found', { status: 404 });
  });
  const profile = mkdtempSync(join(tmpdir(), 'troupe-bench-ui-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: executable,
    headless: true,
    viewport: { width: 1440, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-frame-rate-limit', '--disable-gpu-vsync', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await page.waitForFunction("customElements.get('troupe-team-chat') !== undefined");
    const args = JSON.stringify({ messages: MESSAGES, workers: WORKERS, seconds: SECONDS });
    await page.evaluate(`(${SCENARIO})(${args})`);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const metrics = async () => Object.fromEntries(((await cdp.send('Performance.getMetrics')) as { metrics: Array<{ name: string; value: number }> }).metrics.map((m) => [m.name, m.value])) as Record<string, number>;
    const before = await metrics();
    const trace = await startTrace(cdp);
    const result = (await page.evaluate(`(${STREAM})(${args})`)) as { frames: number[]; kept: number; rendered: number };
    const tasks = await trace();
    const after = await metrics();
    await cdp.send('HeapProfiler.collectGarbage');
    const end = await metrics();
    const spent = (name: string) => ((after[name] ?? 0) - (before[name] ?? 0)) * 1000;
    const frames = [...result.frames].sort((a, b) => a - b);
    const pick = (q: number) => frames[Math.min(frames.length - 1, Math.floor(q * frames.length))]!;
    const over = (ms: number) => frames.filter((f) => f > ms).length;
    const wall = frames.reduce((a, b) => a + b, 0);
    console.log(`${MESSAGES} messages, ${WORKERS} workers streaming for ${SECONDS} s while the reader scrolls (Chromium ${context.browser()?.version() ?? ''}, frame-rate limit off; load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores)\n`);
    console.log('| frames | median | p95 | p99 | longest | over 16 ms | over 50 ms | over 100 ms |');
    console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    console.log(`| ${frames.length} | ${pick(0.5).toFixed(1)} ms | ${pick(0.95).toFixed(1)} ms | ${pick(0.99).toFixed(1)} ms | ${frames.at(-1)!.toFixed(1)} ms | ${over(16)} | ${over(50)} | ${over(100)} |`);
    console.log(`\nmain thread: ${spent('ThreadTime').toFixed(0)} ms of CPU in ${wall.toFixed(0)} ms (${((spent('ThreadTime') / frames.length) || 0).toFixed(1)} ms a frame): script ${spent('ScriptDuration').toFixed(0)} ms, layout ${spent('LayoutDuration').toFixed(0)} ms (${after['LayoutCount']! - before['LayoutCount']!} layouts), style ${spent('RecalcStyleDuration').toFixed(0)} ms`);
    const cpu = tasks.map((t) => t.cpu).sort((a, b) => a - b);
    const cpuAt = (q: number) => cpu[Math.min(cpu.length - 1, Math.floor(q * cpu.length))] ?? 0;
    console.log(`main-thread tasks (CPU time, which a busy machine does not stretch): ${cpu.length}, p99 ${cpuAt(0.99).toFixed(1)} ms, longest ${(cpu.at(-1) ?? 0).toFixed(1)} ms, over 16 ms ${cpu.filter((c) => c > 16).length}, over 50 ms ${cpu.filter((c) => c > 50).length}, over 100 ms ${cpu.filter((c) => c > 100).length}`);
    console.log(`messages kept: ${result.kept}; cards in the DOM: ${result.rendered}; DOM nodes: ${end['Nodes']}; JS heap after GC: ${((end['JSHeapUsedSize'] ?? 0) / 1024 / 1024).toFixed(1)} MB of ${((end['JSHeapTotalSize'] ?? 0) / 1024 / 1024).toFixed(1)} MB`);
    const ok = pick(0.5) < 16 && frames.at(-1)! <= 100;
    const cpuOk = (cpu.at(-1) ?? 0) <= 100;
    console.log(`goal (median frame under 16 ms, no frame over 100 ms): ${ok ? 'met' : 'not met'} by the wall clock${ok ? '' : ` (load average ${loadavg()[0]!.toFixed(1)}: the machine's other work stretches frames)`}; ${cpuOk ? 'met' : 'not met'} by CPU time (no main-thread task over 100 ms)`);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
    await server.close();
  }
}

type Cdp = Awaited<ReturnType<import('playwright-core').BrowserContext['newCDPSession']>>;

/**
 * Trace the renderer's main thread (Chrome's `devtools.timeline`) until the
 * returned function is called; it resolves with each task's wall and CPU
 * time (`dur` and `tdur`), in ms.
 */
async function startTrace(cdp: Cdp): Promise<() => Promise<Array<{ wall: number; cpu: number }>>> {
  const events: Array<{ name?: string; ph?: string; pid?: number; tid?: number; dur?: number; tdur?: number; args?: { name?: string } }> = [];
  cdp.on('Tracing.dataCollected', (data: { value: typeof events }) => events.push(...data.value));
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline', transferMode: 'ReportEvents' });
  return async () => {
    const complete = new Promise<void>((resolve) => cdp.once('Tracing.tracingComplete', () => resolve()));
    await cdp.send('Tracing.end');
    await complete;
    const main = events.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
    return events
      .filter((e) => e.name === 'RunTask' && e.ph === 'X' && main && e.pid === main.pid && e.tid === main.tid)
      .map((e) => ({ wall: (e.dur ?? 0) / 1000, cpu: (e.tdur ?? e.dur ?? 0) / 1000 }));
  };
}
