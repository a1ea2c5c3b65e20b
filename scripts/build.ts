// `npm run build`: the JavaScript of every entry point (tsup: ESM, CommonJS
// and the `troupe` executable) and, beside it, one declaration pass
// (tsc, tsconfig.build.json) for both formats:
//   dist/types/**/*.d.ts    one per source file, as tsc writes them;
//   dist/types/**/*.d.cts   the same with relative imports ending in .cjs,
//                           so `require` consumers resolve CommonJS types;
//   dist/<entry>.d.ts/.d.cts  the entry points package.json `exports` names,
//                           each re-exporting its source file's declarations;
//   dist/ui/elements.js     troupe/ui's browser build: the bundled custom elements
//                           (src/ui/bundle.ts, made by scripts/build-ui.mjs).
// The two builds run at once. docs/decisions.md has the measurements behind
// this layout (one type-check instead of one per format).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { adapters, entryPoints } from './entry-points.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const dist = join(root, 'dist');
const types = join(dist, 'types');

/** Runs a Node script to completion; its output goes to ours. Rejects with its exit code. */
function node(script: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: root, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${relative(root, script)} ${args.join(' ')} failed (${signal ?? `exit ${code}`})`))));
  });
}

/** Every file under `dir` whose name ends with `suffix`. */
function walk(dir: string, suffix: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, suffix, out);
    else if (entry.name.endsWith(suffix)) out.push(path);
  }
  return out;
}

/**
 * A relative module specifier ending in `.js`, in the three places tsc writes
 * one: `from '…'`, `import('…')` and `export … from '…'`. One pass, no
 * backtracking: the quoted part cannot contain a quote or a line break.
 */
const relativeJs = /(\bfrom\s+|\bimport\(\s*)(['"])(\.{1,2}\/[^'"\n]*?)\.js\2/g;

/** A .d.ts as CommonJS declarations: relative imports point at the .d.cts siblings. */
export function toCommonJsDeclarations(text: string): string {
  return text.replace(relativeJs, (_, lead: string, quote: string, path: string) => `${lead}${quote}${path}.cjs${quote}`);
}

/** Writes the declarations of one entry point: `dist/<out>.d.ts` and `.d.cts` re-exporting `src/<source>`. */
function writeEntry(out: string, source: string): void {
  const target = join(types, source.replace(/^src\//, '').replace(/\.ts$/, ''));
  let spec = relative(dirname(join(dist, out)), target).split('\\').join('/');
  if (!spec.startsWith('.')) spec = `./${spec}`;
  writeFileSync(join(dist, `${out}.d.ts`), `export * from '${spec}.js';\n`);
  writeFileSync(join(dist, `${out}.d.cts`), `export * from '${spec}.cjs';\n`);
}

async function main(): Promise<void> {
  rmSync(dist, { recursive: true, force: true });
  const tsc = require.resolve('typescript/bin/tsc');
  const tsup = join(dirname(require.resolve('tsup/package.json')), 'dist', 'cli-default.js');
  await Promise.all([node(tsup, []), node(tsc, ['-p', 'tsconfig.build.json'])]);

  const declarations = walk(types, '.d.ts');
  for (const file of declarations) writeFileSync(file.replace(/\.d\.ts$/, '.d.cts'), toCommonJsDeclarations(readFileSync(file, 'utf8')));

  // The entry points, from the one list tsup reads.
  for (const [subpath, source] of Object.entries(entryPoints)) writeEntry(subpath === '.' ? 'index' : `${subpath}/index`, source);
  for (const name of adapters) writeEntry(`adapters/${name}`, `src/adapters/${name}.ts`);

  // troupe/ui in a browser (the `browser` condition): the bundled elements, as they are served.
  const { UI_SCRIPT } = await import('../src/ui/bundle.js');
  writeFileSync(join(dist, 'ui', 'elements.js'), UI_SCRIPT);
  console.log(`types: ${declarations.length} declaration files, ESM and CommonJS`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
