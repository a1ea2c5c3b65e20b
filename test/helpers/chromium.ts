// The real Chromium for the browser tests: the distribution's `chromium`
// package (or CHROMIUM_PATH), driven by playwright-core, which downloads no
// browser. Each launch gets a fresh profile (Playwright's temporary one), and no
// network beyond what the page itself asks for (a report asks for nothing).
import { existsSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';

/** How to make the browser tests run when they are skipped. */
export const ENABLE_CHROMIUM = 'install Chromium (`apt-get install -y chromium`) or set CHROMIUM_PATH to a Chromium executable';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

/** The Chromium executable, or undefined when there is none. */
export function findChromium(): string | undefined {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  return CANDIDATES.find((path) => existsSync(path));
}

/** True when CI asks for the browser tests to run (a missing Chromium is then an error). */
export function chromiumRequired(): boolean {
  return process.env.TROUPE_REQUIRE_CHROMIUM === '1';
}

/** A headless Chromium with a fresh profile: `context` is its first context; `newContext()` opens another (its own clock, cookies, storage); each holds one blank page of its own from the start; `close()` ends it. */
export async function launchChromium(executablePath: string): Promise<{ context: BrowserContext; newContext(): Promise<BrowserContext>; close(): Promise<void> }> {
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // One renderer process for all the pages of a context, kept alive by a blank page (below): a page that opens then
      // takes the renderer that is already up instead of starting one, which costs Chromium 1–2 s of CPU each time.
      '--renderer-process-limit=1',
      '--disable-site-isolation-trials',
    ],
    timeout: 30_000,
  });
  const newContext = async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    // The page that keeps the context's renderer up between the tests' pages (Chromium ends a renderer with its last page).
    await context.newPage();
    return context;
  };
  const context = await newContext();
  return {
    context,
    newContext,
    async close() {
      await browser.close().catch(() => undefined);
    },
  };
}
