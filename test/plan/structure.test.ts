import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '..', '..', 'src', 'plan');
/** Every module of the plan layer, relative to `src/plan` (`engine/machine.ts`). */
const files = readdirSync(dir, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.split('\\').join('/'));
const source = (file: string) => ts.createSourceFile(file, readFileSync(join(dir, file), 'utf8'), ts.ScriptTarget.Latest, true);

/** The plan modules each module imports (type imports included), relative to `src/plan`. */
function imports(file: string): string[] {
  const found: string[] = [];
  source(file).forEachChild((node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const spec = node.moduleSpecifier.text;
      if (!spec.startsWith('.')) return;
      const target = relative(dir, resolve(dir, dirname(file), spec.replace(/\.js$/, '.ts'))).split('\\').join('/');
      if (!target.startsWith('..')) found.push(target);
    }
  });
  return found;
}

describe('the plan layer sources', () => {
  it('import each other without a ring', () => {
    const graph = new Map(files.map((f) => [f, imports(f)]));
    const rings: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        rings.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const f of files) visit(f, []);
    expect(rings).toEqual([]);
  });

  it('have no function longer than 60 lines', () => {
    const long: string[] = [];
    for (const file of files) {
      const sf = source(file);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const lines = sf.getLineAndCharacterOfPosition(node.end).line - sf.getLineAndCharacterOfPosition(node.getStart()).line + 1;
          if (lines > 60) long.push(`${file}: ${node.name?.getText() ?? 'a function'} (${lines} lines)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(sf);
    }
    expect(long).toEqual([]);
  });
});
