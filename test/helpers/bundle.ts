// A TypeScript entry a test runs in a child process (a fixture, the CLI),
// bundled with esbuild once per test process (its packages left to
// node_modules): the child starts on one file of plain JavaScript instead
// of loading the sources through tsx, a second of CPU less each time.
// Tests that start an example or a script as a user would still use tsx.
import { buildSync } from 'esbuild';
import { mkdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const cache = join(root, 'node_modules', '.cache', 'troupe-tests');
const bundles = new Map<string, string>();

/** The path of `entry` (absolute) bundled into one ES module, built at the first call of this process. */
export function bundled(entry: string): string {
  let out = bundles.get(entry);
  if (out === undefined) {
    out = join(cache, `${basename(entry).replace(/\.[cm]?ts$/, '')}-${process.pid}-${bundles.size}.mjs`);
    mkdirSync(cache, { recursive: true });
    buildSync({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', outfile: out, logLevel: 'warning' });
    if (bundles.size === 0) process.once('exit', () => bundles.forEach((file) => rmSync(file, { force: true })));
    bundles.set(entry, out);
  }
  return out;
}

/** The CLI (`src/cli/index.ts`) bundled. */
export const cliBundle = (): string => bundled(join(root, 'src', 'cli', 'index.ts'));
