// A planning session steered from the page, in headless Chromium, on the
// scripted adapter behind `troupe dev`'s server: the task typed in the
// input bar, the lead's question answered there, the plan edited (an edit
// that makes a cycle refused in place, then one title changed, a chunk
// added and another added and removed) and
// approved, worker pills with progress, a tool approval answered in the
// page, an instruction injected into the running worker (seen in its next
// prompt, in its turns), the pills hidden two seconds after the end, and
// the report opened from the run history. axe checks every state; each is
// saved as a screenshot in test-artifacts/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from 'troupe';
import { scriptedAdapter } from 'troupe/testing';
import { readRun } from 'troupe/persistence';
import { namespacedStore } from 'troupe/http';
import { launchChromium } from '../helpers/chromium.js';
import type { TestServer } from '../helpers/http-server.js';
import { CHAT, chatState, chromiumFor, devServer, expectAccessible, shot, waitForChat, watchProblems } from './browser.js';

const executable = chromiumFor('Interface browser test (planning session)');

const plan = {
  planSummary: 'Add a CSV export to the report',
  chunks: [
    { sequenceIndex: 0, title: 'Write the exporter', prompt: 'Write src/export.ts that turns the report rows into CSV.', dependsOnIndexes: [], complexity: 'Medium', role: 'Implementation', estimatedMs: 4000 },
    { sequenceIndex: 1, title: 'Document the export', prompt: 'Describe the CSV export in the README, with an example.', dependsOnIndexes: [0], complexity: 'Low', role: 'Generic', estimatedMs: 1000 },
  ],
};
const INSTRUCTION = 'Use tabs, not commas.';

describe.skipIf(!executable)('a planning session steered from the page', () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let server: TestServer;
  let store: Awaited<ReturnType<typeof devServer>>['store'];
  const written: string[] = [];
  const adapter = scriptedAdapter({
    replies: {
      planner: ['{"action":"clarify","questions":["Which columns should the CSV have?"]}', '{"action":"plan"}', JSON.stringify(plan)],
      Implementation: [
        { text: 'I will write the exporter.', toolCalls: [{ name: 'write_file', arguments: { path: 'src/export.ts' } }], delayMs: 300 },
        { text: 'The exporter is written.', delayMs: 2500 },
        { chunks: ['Switched to ', 'tabs, as asked.'], chunkDelayMs: 200 },
      ],
      Generic: [
        { text: 'The README describes the export.', delayMs: 400 },
        { text: 'The exporter has a test.', delayMs: 400 },
      ],
    },
    rules: [{ agent: 'synthesis', reply: '**Done.** The report exports CSV (tab-separated), documented in the README.' }],
  });
  const writeFile = defineTool({
    name: 'write_file',
    description: 'Write a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => (written.push(path), `wrote ${path}`),
  });

  beforeAll(async () => {
    ({ server, store } = await devServer({ adapter, tools: [writeFile], toolRisks: { write_file: 'writes' } }));
    browser = await launchChromium(executable!);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('clarify, edit, approve, watch, approve a tool, instruct a worker, see the end and open the report', { timeout: 300_000 }, async () => {
    const page = await browser.context.newPage();
    page.setDefaultTimeout(60_000);
    const problems = watchProblems(page);
    await page.goto(server.url);
    await page.locator('troupe-team-picker button.entry').first().waitFor();
    await expectAccessible(page, 'the page before any run');
    await shot(page, 'empty');

    // The task, typed in the chat's input bar: Enter starts the lead.
    const box = page.locator('troupe-input-bar textarea');
    await box.fill('Add a CSV export to the report');
    await box.press('Enter');
    await waitForChat(page, (s) => s.requests.some((r) => r.kind === 'question' && r.status === 'pending'));
    expect(await box.getAttribute('placeholder')).toBe('Answer the lead’s questions…');
    await expectAccessible(page, 'a question from the lead');
    await shot(page, 'question');
    await box.fill('Date, item and amount.');
    await box.press('Shift+Enter');
    expect(await box.inputValue()).toBe('Date, item and amount.\n');
    await box.press('Enter');

    // The plan: an edit that makes a cycle is refused in place; a changed title is approved.
    const review = page.locator('troupe-plan-review');
    await review.locator('button', { hasText: 'Edit' }).click();
    await expectAccessible(page, 'the plan being edited');
    await review.locator('li[data-chunk="0"] input[type=checkbox]').check();
    await review.locator('button', { hasText: 'Approve as edited' }).click();
    await expect.poll(async () => review.locator('p.error').textContent()).toContain('dependency cycle: 0 -> 1 -> 0');
    await shot(page, 'plan-refused');
    await review.locator('li[data-chunk="0"] input[type=checkbox]').uncheck();
    await review.locator('li[data-chunk="1"] input:not([type])').fill('Document the CSV export');
    // A chunk added (a test of the exporter, after it) and one added then removed.
    await review.locator('button', { hasText: 'Add a chunk' }).click();
    const added = review.locator('li[data-chunk="2"]');
    await added.locator('input:not([type])').fill('Test the exporter');
    await added.locator('textarea').fill('Add a test for src/export.ts.');
    await added.locator('select').first().selectOption('Generic');
    await added.locator('label', { hasText: '0. Write the exporter' }).locator('input[type=checkbox]').check();
    await review.locator('button', { hasText: 'Add a chunk' }).click();
    await review.getByRole('button', { name: 'Remove chunk 3' }).click();
    expect(await review.locator('li[data-chunk]').count()).toBe(3);
    await shot(page, 'plan-edit');
    await review.locator('button', { hasText: 'Approve as edited' }).click();

    // Workers appear as pills, with progress (the plan estimates the chunk); the tool call waits for the person.
    await page.locator('troupe-worker-bar .pill[data-status="running"]').first().waitFor();
    const progress = page.locator('troupe-worker-bar .pill[data-status="running"] [role=progressbar]').first();
    expect(Number(await progress.getAttribute('aria-valuenow'))).toBeGreaterThanOrEqual(0);
    await waitForChat(page, (s) => s.requests.some((r) => r.kind === 'approval' && r.status === 'pending'));
    const approval = page.locator('troupe-approval');
    await approval.locator('button', { hasText: 'Allow once' }).waitFor();
    expect(await approval.locator('.risk').textContent()).toBe('writes');
    expect(await approval.locator('pre').textContent()).toContain('"path": "src/export.ts"');
    await expectAccessible(page, 'a tool approval with a worker at work');
    await shot(page, 'approval');
    // A pill shows its worker's latest message (the worker waits for the approval: its pill stays).
    await page.locator('troupe-worker-bar .pill[data-status="running"]').first().click();
    await expect.poll(() => page.evaluate(`${CHAT}.shadowRoot.activeElement?.dataset.source ?? ''`)).toBe('worker');
    await approval.locator('button', { hasText: 'Allow once' }).click();
    await expect.poll(() => written).toEqual(['src/export.ts']);

    // While the worker writes its answer, an instruction in injection mode.
    await page.locator('troupe-input-bar input[type=checkbox]').check();
    await box.fill(INSTRUCTION);
    await box.press('Enter');
    const injected = await waitForChat(page, (s) => s.messages.some((m) => m.source === 'injection' && m.text === INSTRUCTION));
    expect(injected.messages.filter((m) => m.source === 'injection')).toHaveLength(1);
    expect(await page.locator('troupe-worker-bar .pill').count()).toBeGreaterThanOrEqual(1);
    await shot(page, 'workers');

    // The end: the lead's answer; the pills go after the last worker ended (two seconds after, on the page's
    // clock: the chat test checks the delay exactly).
    await waitForChat(page, (s) => s.status === 'completed', 90_000);
    await page.locator('troupe-worker-bar .bar').waitFor({ state: 'detached' });
    await expectAccessible(page, 'the run completed');
    await shot(page, 'completed');

    const state = await chatState(page);
    expect(state.workers.map((w) => [w.title, w.status])).toEqual([
      ['Write the exporter', 'completed'],
      ['Document the CSV export', 'completed'],
      ['Test the exporter', 'completed'],
    ]);
    // The added chunk ran after the one it was set to wait for, with its own prompt.
    expect(adapter.inputsOf('Generic').some((input) => input.includes('Add a test for src/export.ts.'))).toBe(true);
    // The instruction reached the running worker at its next turn, and its turns show it.
    const turns = state.turns.filter((t) => t.agent === 'Implementation');
    expect(turns.at(-1)!.input).toContain(INSTRUCTION);
    expect(adapter.inputsOf('Implementation').at(-1)).toContain(INSTRUCTION);
    // The implementer's first card is near the top of the feed: Home there (the feed draws only what is in view).
    await page.locator('article.msg').first().focus();
    await page.keyboard.press('Home');
    const turnsOf = page.getByRole('button', { name: /^Show the turns of Implementation/ }).first();
    const panel = page.locator('troupe-worker-turns');
    // A click that lands while the card is drawn again is lost: click again until the panel is open.
    await expect
      .poll(async () => {
        if ((await panel.count()) === 0) await turnsOf.click();
        return panel.locator('pre').allTextContents();
      })
      .toEqual(expect.arrayContaining([expect.stringContaining(INSTRUCTION)]));
    await expectAccessible(page, 'a worker’s turns');
    await shot(page, 'turns');
    await panel.locator('button', { hasText: 'Close' }).click();

    // The page shows every event of the run log once.
    const log = await readRun(state.runId!, { store: namespacedStore(store, 'local') });
    expect(state.lastSeq).toBe(log.events.length - 1);

    // The report opens from the run history.
    await page.locator('troupe-run-history button', { hasText: 'Refresh' }).click();
    const [report] = await Promise.all([browser.context.waitForEvent('page'), page.locator(`troupe-run-history li[data-run="${state.runId}"] a`, { hasText: 'Report' }).click()]);
    await report.waitForSelector('[data-testid=timeline]', { timeout: 15_000 });
    await report.close();

    // Dark theme.
    await page.getByRole('button', { name: /^Theme:/ }).click();
    await expect.poll(() => page.locator('troupe-app').getAttribute('theme')).toBe('dark');
    await expectAccessible(page, 'the dark theme');
    await shot(page, 'dark');
    // The one failed request is the refused edit (the server's 400, shown in the plan review).
    expect(problems).toEqual(['error: Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    await page.close();
  });
});
