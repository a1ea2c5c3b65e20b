// A TypeScript entry a test runs in a child process (a fixture, the CLI),
// bundled with esbuild, its packages taken in: the child starts on one file
// of plain JavaScript instead of loading the sources through tsx and its
// packages file by file from node_modules (a BullMQ worker fixture: 1.0 s of
// CPU to start with its packages left out, 0.47 s with them in). Tests that
// start an example or a script as a user would still use tsx.
//
// A bundle is built once and kept in node_modules/.cache/troupe-bundles/
// with the list of files it was built from: the test processes of a run, and
// later runs, take it from there while none of those files changed (size and
// modification time), and build it again when one did. One file per entry,
// written whole under a temporary name and renamed into place, so a process
// never reads half a bundle and the cache does not grow from run to run.
import { createHash } from 'node:crypto';
import { buildSync, version as esbuildVersion, type BuildOptions } from 'esbuild';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const cache = join(root, 'node_modules', '.cache', 'troupe-bundles');
const bundles = new Map<string, string>();

/** A source file a bundle was built from, as it was then. */
type Input = [path: string, size: number, mtimeMs: number];

/** True when every input is still as it was. */
function unchanged(inputs: Input[]): boolean {
  for (const [path, size, mtimeMs] of inputs) {
    try {
      const stat = statSync(path);
      if (stat.size !== size || stat.mtimeMs !== mtimeMs) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** The inputs recorded beside a bundle, or undefined when there is none or it cannot be read. */
function readInputs(file: string): Input[] | undefined {
  try {
    const inputs: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return Array.isArray(inputs) ? (inputs as Input[]) : undefined;
  } catch {
    return undefined;
  }
}

/** The path of `entry` (absolute) bundled into one ES module, built unless an up-to-date bundle is in the cache. */
export function bundled(entry: string): string {
  const known = bundles.get(entry);
  if (known !== undefined) return known;
  const options: BuildOptions = {
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'bundle',
    // CommonJS packages taken in call `require`, which an ES module lacks.
    banner: { js: "import { createRequire as __troupeRequire } from 'node:module'; const require = __troupeRequire(import.meta.url);" },
    absWorkingDir: root,
    logLevel: 'warning',
  };
  const hash = createHash('sha256').update(JSON.stringify([esbuildVersion, options])).digest('hex').slice(0, 12);
  const out = join(cache, `${basename(entry).replace(/\.[cm]?[tj]s$/, '')}-${hash}.mjs`);
  const inputsFile = `${out}.inputs.json`;
  const recorded = readInputs(inputsFile);
  if (!recorded || !unchanged(recorded)) {
    mkdirSync(cache, { recursive: true });
    const temporary = `${out}.${process.pid}.tmp`;
    try {
      const { metafile } = buildSync({ ...options, outfile: temporary, metafile: true });
      const inputs: Input[] = Object.keys(metafile!.inputs).map((path) => {
        const absolute = resolve(root, path);
        try {
          const stat = statSync(absolute);
          return [absolute, stat.size, stat.mtimeMs];
        } catch {
          return [absolute, -1, -1]; // Not a file (never unchanged): the bundle is built again next time.
        }
      });
      writeFileSync(`${temporary}.json`, JSON.stringify(inputs));
      // The bundle first: a process that reads the new list of inputs finds the bundle built from them.
      renameSync(temporary, out);
      renameSync(`${temporary}.json`, inputsFile);
    } finally {
      rmSync(temporary, { force: true });
      rmSync(`${temporary}.json`, { force: true });
    }
  }
  bundles.set(entry, out);
  return out;
}

/** The stand-in coding-agent CLI of the examples (examples/cli/stand-in-agent.mjs), bundled. */
export const standInBundle = (): string => bundled(join(root, 'examples', 'cli', 'stand-in-agent.mjs'));

/** The examples' ticket MCP server (examples/cli/ticket-server.mjs), bundled. */
export const ticketServerBundle = (): string => bundled(join(root, 'examples', 'cli', 'ticket-server.mjs'));

/** The CLI (`src/cli/index.ts`) bundled. */
export const cliBundle = (): string => bundled(join(root, 'src', 'cli', 'index.ts'));
