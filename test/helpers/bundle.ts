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

/**
 * The path of `entry` (absolute) bundled into one ES module, built at the first call of this process.
 * `packages: 'bundle'` takes its packages in too (a small script that loads a large package, such as the
 * MCP SDK, starts in half the CPU).
 */
export function bundled(entry: string, { packages = 'external' }: { packages?: 'external' | 'bundle' } = {}): string {
  const key = `${packages}:${entry}`;
  let out = bundles.get(key);
  if (out === undefined) {
    out = join(cache, `${basename(entry).replace(/\.[cm]?[tj]s$/, '')}-${process.pid}-${bundles.size}.mjs`);
    mkdirSync(cache, { recursive: true });
    buildSync({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages,
      // CommonJS packages taken in call `require`, which an ES module lacks.
      ...(packages === 'bundle' ? { banner: { js: "import { createRequire as __troupeRequire } from 'node:module'; const require = __troupeRequire(import.meta.url);" } } : {}),
      outfile: out,
      logLevel: 'warning',
    });
    if (bundles.size === 0) process.once('exit', () => bundles.forEach((file) => rmSync(file, { force: true })));
    bundles.set(key, out);
  }
  return out;
}

/** The stand-in coding-agent CLI of the examples (examples/cli/stand-in-agent.mjs), bundled with its packages. */
export const standInBundle = (): string => bundled(join(root, 'examples', 'cli', 'stand-in-agent.mjs'), { packages: 'bundle' });

/** The examples' ticket MCP server (examples/cli/ticket-server.mjs), bundled with its packages. */
export const ticketServerBundle = (): string => bundled(join(root, 'examples', 'cli', 'ticket-server.mjs'), { packages: 'bundle' });

/** The CLI (`src/cli/index.ts`) bundled. */
export const cliBundle = (): string => bundled(join(root, 'src', 'cli', 'index.ts'));
