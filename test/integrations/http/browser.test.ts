// The example service in a real browser: headless Chromium (the
// distribution's package) opens the page, starts the plan, and follows it
// with the browser's own EventSource. The test cuts every connection twice
// mid-stream: the browser reconnects with Last-Event-ID and the page ends
// up with every event of the run log exactly once. A person's click on
// Approve lets the tool call through. Saves a screenshot in test-artifacts/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRun } from 'troupe/persistence';
import { namespacedStore } from 'troupe/http';
import { createApp } from '../../../examples/serve/app.js';
import { ENABLE_CHROMIUM, chromiumRequired, findChromium, launchChromium } from '../../helpers/chromium.js';
import { startServer, type TestServer } from '../../helpers/http-server.js';

const executable = findChromium();
if (!executable) {
  if (chromiumRequired()) throw new Error(`TROUPE_REQUIRE_CHROMIUM=1 but Chromium was not found: ${ENABLE_CHROMIUM}`);
  console.warn(`\n⚠ Serving browser test skipped: Chromium not found. To run it, ${ENABLE_CHROMIUM}.\n`);
}

const artifacts = join(import.meta.dirname, '..', '..', '..', 'test-artifacts');

describe.skipIf(!executable)('the example service in headless Chromium', () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let server: TestServer;
  const app = createApp({ latencyMs: 150 });

  beforeAll(async () => {
    server = await startServer((request) => app.handle(request));
    browser = await launchChromium(executable!);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows live progress through two dropped connections, losing and repeating nothing, and takes an approval', { timeout: 60_000 }, async () => {
    const page = await browser.context.newPage();
    page.setDefaultTimeout(20_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/?token=demo`);
    await page.click('#start');
    await page.waitForFunction('window.__events.length >= 6');
    server.dropConnections();
    await page.waitForSelector('#approval', { state: 'visible' });
    expect(await page.textContent('#approval-title')).toBe('Implementation asks to call write_file');
    await page.screenshot({ path: join(mkdirOnce(), 'serve-approval.png') });
    // The run waits for the person: cut the stream while it is idle, then approve.
    server.dropConnections();
    await page.click('#approve');
    await page.waitForFunction("document.getElementById('status').textContent === 'completed'");
    expect(await page.isVisible('#approval')).toBe(false);
    expect(await page.textContent('#output')).toBe('The notes list every change.');
    expect(await page.$$eval('#chunks td:last-child', (cells) => cells.map((c) => c.textContent))).toEqual(['completed', 'completed', 'completed']);
    const seen = (await page.evaluate('window.__events')) as Array<{ id: string; type: string }>;
    const runId = (await page.evaluate('window.__runId')) as string;
    const log = await readRun(runId, { store: namespacedStore(app.store, 'demo') });
    expect(seen.map((e) => e.id)).toEqual(log.events.map((_, i) => String(i)));
    expect(seen.map((e) => e.type)).toEqual(log.events.map((e) => e.type));
    expect(app.files.get('RELEASE.md')).toContain('Remote approvals');
    expect(errors).toEqual([]);
    await page.close();
  });
});

function mkdirOnce(): string {
  mkdirSync(artifacts, { recursive: true });
  return artifacts;
}
