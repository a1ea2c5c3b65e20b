import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { adapters, entryPoints } from '../../scripts/entry-points.js';
import { sharedHost } from '../helpers/compiler.js';

const root = join(import.meta.dirname, '..', '..');
const json = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8')) as Record<string, unknown>;

/** The names (values and types) a source entry point exports, as the compiler sees them. */
function exportedNames(files: readonly string[]): Map<string, string[]> {
  const options: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, skipLibCheck: true, types: ['node'] };
  const program = ts.createProgram(
    files.map((f) => join(root, f)),
    options,
    sharedHost(options),
  );
  const checker = program.getTypeChecker();
  const out = new Map<string, string[]>();
  for (const file of files) {
    const symbol = checker.getSymbolAtLocation(program.getSourceFile(join(root, file))!)!;
    out.set(file, checker.getExportsOfModule(symbol).map((s) => s.name).sort());
  }
  return out;
}

describe('entry points', () => {
  const subpaths = Object.keys(entryPoints);

  it('package.json exports every entry point, and only those (plus troupe/adapters/* and package.json)', () => {
    const exports = Object.keys(json('package.json')['exports'] as Record<string, unknown>);
    const expected = [...subpaths.map((s) => (s === '.' ? '.' : `./${s}`)), './adapters/*', './package.json'];
    expect([...exports].sort()).toEqual([...expected].sort());
  });

  it('tsconfig paths resolve every subpath to its source, so tests and examples import the package by name', () => {
    const paths = (json('tsconfig.json')['compilerOptions'] as { paths: Record<string, string[]> }).paths;
    const expected = Object.fromEntries([
      ...Object.entries(entryPoints).map(([s, src]) => [s === '.' ? 'troupe' : `troupe/${s}`, [`./${src}`]]),
      ['troupe/adapters/*', ['./src/adapters/*.ts']],
    ]);
    expect(paths).toEqual(expected);
  });

  it('typedoc documents every entry point, troupe/adapters/* included, each named by its subpath in a category of its layer', () => {
    const typedoc = json('typedoc.json') as { entryPoints: string[]; categoryOrder: string[]; projectDocuments: string[] };
    const sources = { ...entryPoints, ...Object.fromEntries(adapters.map((name) => [`adapters/${name}`, `src/adapters/${name}.ts`])) };
    expect([...typedoc.entryPoints].sort()).toEqual(Object.values(sources).sort());
    const categories = new Set<string>();
    for (const [subpath, source] of Object.entries(sources)) {
      const header = /^\/\*\*[\s\S]*?\*\//.exec(readFileSync(join(root, source), 'utf8'))?.[0] ?? '';
      expect(header, source).toContain(`@module ${subpath === '.' ? 'troupe' : `troupe/${subpath}`}\n`);
      const category = /@category (.+)\n/.exec(header)?.[1];
      expect(typedoc.categoryOrder, source).toContain(category);
      categories.add(category!);
    }
    expect(categories.size).toBeGreaterThanOrEqual(10);
    // The guides are pages of the reference (README links to them become links between pages).
    expect(typedoc.projectDocuments).toEqual(['docs/*.md', 'docs/patterns/*.md']);
  });

  it('every adapter of troupe/adapters/* is a source file', () => {
    for (const name of adapters) expect(() => readFileSync(join(root, 'src', 'adapters', `${name}.ts`))).not.toThrow();
  });

  // The compiler reads every entry point and all it imports: seconds of CPU, more on a loaded machine.
  it('the root exports at most 50 names, each also exported by its layer subpath; troupe/kernel at most 90', { timeout: 120_000 }, () => {
    const names = exportedNames(Object.values(entryPoints));
    const rootNames = names.get(entryPoints['.']!)!;
    expect(rootNames.length).toBeLessThanOrEqual(50);
    // The kernel is sized for authors of patterns, adapters and stores (docs/architecture.md).
    expect(names.get(entryPoints['kernel']!)!.length, 'troupe/kernel').toBeLessThanOrEqual(90);
    const elsewhere = new Set(Object.entries(entryPoints).filter(([s]) => s !== '.').flatMap(([, src]) => names.get(src)!));
    expect(rootNames.filter((n) => !elsewhere.has(n))).toEqual([]);
    // Every subpath exports something.
    for (const [subpath, src] of Object.entries(entryPoints)) expect(names.get(src)!.length, subpath).toBeGreaterThan(0);
  });
});
