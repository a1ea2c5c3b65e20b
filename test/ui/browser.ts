// What the interface's browser tests share: Chromium (skipped with one line
// when it is missing, required with TROUPE_REQUIRE_CHROMIUM=1), a
// `troupe dev` server on 127.0.0.1 around a scripted adapter, the chat's
// state read from the page, axe, and screenshots in test-artifacts/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { ModelAdapter, ToolDefinition } from 'troupe';
import type { ToolRisk } from 'troupe/guardrails';
import { memoryStore } from 'troupe/testing';
import { devApp } from '../../src/cli/dev-app.js';
import { readCatalog } from '../../src/cli/dev-catalog.js';
import type { PlanningSessionOptions } from '../../src/plan/session/planning-session.js';
import { ENABLE_CHROMIUM, chromiumRequired, findChromium } from '../helpers/chromium.js';
import { startServer, type TestServer } from '../helpers/http-server.js';

/** The Chromium to use, or undefined after one line saying how to run the tests. */
export function chromiumFor(what: string): string | undefined {
  const executable = findChromium();
  if (!executable) {
    if (chromiumRequired()) throw new Error(`TROUPE_REQUIRE_CHROMIUM=1 but Chromium was not found: ${ENABLE_CHROMIUM}`);
    console.warn(`\n⚠ ${what} skipped: Chromium not found. To run it, ${ENABLE_CHROMIUM}.\n`);
  }
  return executable;
}

export const artifacts = join(import.meta.dirname, '..', '..', 'test-artifacts');

/** Save a screenshot as test-artifacts/ui-<name>.png. */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, `ui-${name}.png`) });
}

/** A `troupe dev` server over an empty folder, on `adapter`. */
export async function devServer(options: { adapter: ModelAdapter; tools?: ToolDefinition[]; toolRisks?: Record<string, ToolRisk>; planning?: Partial<PlanningSessionOptions>; folder?: string }): Promise<{ server: TestServer; store: ReturnType<typeof memoryStore>; handle: (request: Request) => Promise<Response> }> {
  const store = memoryStore();
  const catalog = await readCatalog(options.folder ?? join(import.meta.dirname, '..', 'fixtures', 'ui-empty'));
  const { handle } = devApp({
    catalog,
    adapter: options.adapter,
    adapterName: 'scripted',
    store,
    pollMs: 25,
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.toolRisks ? { toolRisks: options.toolRisks } : {}),
    planning: { retry: { delayMs: 0 }, ...options.planning },
  });
  return { server: await startServer(handle), store, handle };
}

/** The chat's state, as plain data. */
export interface ChatSnapshot {
  status: string;
  phase?: string;
  runId?: string;
  lastSeq: number;
  messages: Array<{ id: string; source: string; author: string; text: string; kind: string }>;
  workers: Array<{ title: string; status: string }>;
  requests: Array<{ kind: string; status: string; error?: string }>;
  turns: Array<{ agent: string; input: string; workerKey?: string }>;
}

/** The chat (inside `<troupe-app>`, or the page's own `<troupe-team-chat>`), as page code. */
export const CHAT = `(document.querySelector('troupe-app')?.shadowRoot?.querySelector('troupe-team-chat') ?? document.querySelector('troupe-team-chat'))`;

/** The chat's state as plain data (page code in a string: the tests type-check without the DOM library). */
export async function chatState(page: Page): Promise<ChatSnapshot> {
  return (await page.evaluate(`(() => {
    const m = ${CHAT}.model;
    return {
      status: m.status,
      phase: m.phase,
      runId: m.runId,
      lastSeq: m.lastSeq,
      messages: m.messages.map((x) => ({ id: x.id, source: x.source, author: x.author, text: x.text, kind: x.kind })),
      workers: [...m.workers.values()].map((w) => ({ title: w.title, status: w.status })),
      requests: [...m.requests.values()].map((r) => ({ kind: r.kind, status: r.status, error: r.error })),
      turns: m.turns.map((t) => ({ agent: t.agent, input: t.input, workerKey: t.workerKey })),
    };
  })()`)) as ChatSnapshot;
}

/** Wait until the chat's state passes `test`. */
export async function waitForChat(page: Page, test: (state: ChatSnapshot) => boolean, timeoutMs = 60_000): Promise<ChatSnapshot> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await chatState(page);
    if (test(state)) return state;
    if (Date.now() > deadline) throw new Error(`the chat never got there; it is ${JSON.stringify({ status: state.status, phase: state.phase, requests: state.requests, workers: state.workers, last: state.messages.slice(-3) })}`);
    await page.waitForTimeout(50);
  }
}

/** axe finds no serious or critical violation on the page as it is. */
export async function expectAccessible(page: Page, state: string): Promise<void> {
  // axe-core goes into the page once per document: AxeBuilder sends its 500 KB source with every check, and twice
  // in legacy mode (a quarter of a second of the browser's CPU each time), so it is handed a source of nothing
  // once the page has axe. Legacy mode runs axe in the page itself: the default opens a page of its own for every
  // analysis to combine the results of cross-origin frames, which these pages do not have. Only violations are
  // collected: axe otherwise builds selectors and HTML for every element that passed every rule.
  if (!(await page.evaluate('typeof window.axe?.run === "function"'))) await page.evaluate(axe.source);
  const result = await new AxeBuilder({ page, axeSource: ';' }).setLegacyMode(true).options({ resultTypes: ['violations'] }).analyze();
  expect(result.passes.length, `axe ran no rule on ${state}`).toBeGreaterThan(0);
  const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(
    serious.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`),
    `accessibility of ${state}`,
  ).toEqual([]);
}

/** Problems the page reports (console errors and warnings, uncaught errors). */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${String(error)}`));
  return problems;
}
