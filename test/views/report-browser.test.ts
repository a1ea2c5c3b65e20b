// The run report in a real browser: headless Chromium (the distribution's
// package) opens the page from a file, and the test checks what a person
// would see: the timeline and the plan's graph drawn, no console errors, and
// a click that shows an op's details. It saves a screenshot and prints its
// path. Without Chromium the test is skipped with one line saying how to run
// it, unless TROUPE_REQUIRE_CHROMIUM=1 (CI), which makes that an error.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, type TroupeEvent } from 'troupe';
import { renderRunReport } from 'troupe/report';
import { SimulatedClock } from 'troupe/testing';
import { ENABLE_CHROMIUM, chromiumRequired, findChromium, launchChromium } from '../helpers/chromium.js';
import { showcaseAdapter, showcaseFlow } from '../helpers/observe-flow.js';
import { drive } from '../plan/helpers.js';

const executable = findChromium();
if (!executable) {
  if (chromiumRequired()) throw new Error(`TROUPE_REQUIRE_CHROMIUM=1 but Chromium was not found: ${ENABLE_CHROMIUM}`);
  console.warn(`\n⚠ Report browser test skipped: Chromium not found. To run it, ${ENABLE_CHROMIUM}.\n`);
}

const root = join(import.meta.dirname, '..', '..');
const artifacts = join(root, 'test-artifacts');

describe.skipIf(!executable)('run report in headless Chromium', () => {
  let dir: string;
  let file: string;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    const clock = new SimulatedClock(1_700_000_000_000);
    const events: TroupeEvent[] = [];
    await drive(clock, run(showcaseFlow(), 'Add a CSV export', { adapter: showcaseAdapter(clock), clock, runId: 'showcase', onEvent: (e) => events.push(e) }));
    dir = mkdtempSync(join(tmpdir(), 'troupe-report-'));
    file = join(dir, 'report.html');
    writeFileSync(file, renderRunReport(events));
    browser = await launchChromium(executable!);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('draws the timeline and the plan graph without errors, shows details on click, and saves a screenshot', async () => {
    const page = await browser.context.newPage();
    page.setDefaultTimeout(5_000);
    const problems: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`pageerror: ${String(error)}`));
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('[data-testid=timeline] rect.bar', { timeout: 15_000 });

    // The timeline: a bar for every op, a lane per agent, markers for the retry and the stall.
    const opBars = await page.locator('[data-testid=timeline] rect.bar-op').count();
    expect(opBars).toBe(24);
    expect(await page.locator('[data-testid=timeline] rect.bar-turn').count()).toBe(26);
    expect(await page.locator('[data-testid=timeline] rect.bar-wait').count()).toBe(1);
    expect(await page.locator('[data-testid=timeline] path.marker-retry').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('[data-testid=timeline] path.marker-stall').count()).toBe(1);
    const box = await page.locator('[data-testid=timeline]').boundingBox();
    expect(box!.width).toBeGreaterThan(600);

    // The plan's graph: four chunks laid out left to right, three on the critical path, edges drawn.
    const nodes = page.locator('[data-testid=dag] g.dag-node');
    expect(await nodes.count()).toBe(4);
    expect(await page.locator('[data-testid=dag] g.dag-node.critical').count()).toBe(3);
    expect(await page.locator('[data-testid=dag] path.edge').count()).toBe(4);
    expect(await page.locator('[data-testid=dag] path.edge.critical').count()).toBe(2);
    const first = await nodes.nth(0).boundingBox();
    const last = await nodes.nth(3).boundingBox();
    expect(last!.x).toBeGreaterThan(first!.x + 100);

    // Usage and the score chart.
    expect(await page.locator('[data-testid=usage] tbody tr').count()).toBe(7);
    expect(await page.locator('[data-testid=scores] circle.point').count()).toBe(3);

    // Click the builder that called a tool: its input, output and tool call appear.
    await page.locator('[data-testid=timeline] rect.bar-op[data-op]').filter({ has: page.locator('title', { hasText: 'agent builder' }) }).nth(1).click();
    await expect.poll(() => page.locator('[data-testid=details-title]').textContent()).toBe('agent builder');
    const details = page.locator('[data-testid=details]');
    expect(await details.locator('[data-testid=tool-calls]').textContent()).toContain('read_file');
    expect(await details.textContent()).toContain('contents of src/export.ts');
    expect(await details.textContent()).toContain('Output');

    // Click the failed first attempt of chunk 3: the error shows.
    await page.locator('[data-testid=timeline] rect.bar-op.st-failed').first().click();
    expect(await details.locator('.block.error pre').first().textContent()).toBe('The model service is overloaded');

    // Click a chunk of the graph: its attempts show.
    await nodes.nth(2).click();
    expect(await page.locator('[data-testid=details-title]').textContent()).toBe('#3 Test the export');
    expect(await details.locator('ol.attempts li').count()).toBe(2);

    mkdirSync(artifacts, { recursive: true });
    const shot = join(artifacts, 'run-report.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`run report screenshot: ${shot}`);

    expect(problems).toEqual([]);
    // The page asked for nothing but itself.
    expect(requests.filter((u) => !u.startsWith('file:'))).toEqual([]);
    await page.close();
  });
});
