// Prints the public names of every entry point (scripts/entry-points.ts):
// `npm run api:names` prints a count per entry point, `-- --list` every name.
// `--max-kernel <n>` fails when troupe/kernel exports more than n names (CI).
import ts from 'typescript';
import { adapters, entryPoints } from './entry-points.js';

/** Entry point (as imported) → its exported names, sorted. */
export function publicNames(): Map<string, string[]> {
  const files = new Map<string, string>();
  for (const [subpath, source] of Object.entries(entryPoints)) files.set(subpath === '.' ? 'troupe' : `troupe/${subpath}`, source);
  for (const name of adapters) files.set(`troupe/adapters/${name}`, `src/adapters/${name}.ts`);
  const config = ts.getParsedCommandLineOfConfigFile('tsconfig.build.json', {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!config) throw new Error('tsconfig.build.json could not be read');
  const program = ts.createProgram([...files.values()], { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const out = new Map<string, string[]>();
  for (const [name, file] of files) {
    const source = program.getSourceFile(file);
    const symbol = source && checker.getSymbolAtLocation(source);
    if (!symbol) throw new Error(`${file} has no module symbol`);
    out.set(name, checker.getExportsOfModule(symbol).map((s) => s.getName()).sort());
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const list = process.argv.includes('--list');
  const maxAt = process.argv.indexOf('--max-kernel');
  const names = publicNames();
  let total = 0;
  const distinct = new Set<string>();
  for (const [entry, exported] of names) {
    total += exported.length;
    for (const n of exported) distinct.add(n);
    console.log(`${entry.padEnd(28)} ${String(exported.length).padStart(4)}${list ? `  ${exported.join(', ')}` : ''}`);
  }
  console.log(`${'all entry points'.padEnd(28)} ${String(total).padStart(4)} (${distinct.size} distinct)`);
  if (maxAt > 0) {
    const max = Number(process.argv[maxAt + 1]);
    const kernel = names.get('troupe/kernel')?.length ?? 0;
    if (kernel > max) {
      console.error(`troupe/kernel exports ${kernel} names; at most ${max} are allowed`);
      process.exitCode = 1;
    }
  }
}
