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

describe('one implementation of each concept (issue #33)', () => {
  const all = (root: string) =>
    readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(root, f));
  const src = join(import.meta.dirname, '..', '..', 'src');

  it('approvals are asked through their tool guardrail: the plan layer wraps no tool in `guard`, and one module words a refusal', () => {
    const guardCalls = files.filter((f) => /\.guard\(/.test(readFileSync(join(dir, f), 'utf8')));
    expect(guardCalls).toEqual([]);
    const refusers = all(src).filter((f) => readFileSync(f, 'utf8').includes('Not approved: the use of'));
    expect(refusers.map((f) => relative(src, f).split('\\').join('/'))).toEqual(['guardrails/approvals.ts']);
    // `guard(tool)` is the guardrail for one tool: it asks through `guardrail()`.
    const approvals = readFileSync(join(src, 'guardrails', 'approvals.ts'), 'utf8');
    const guard = approvals.slice(approvals.indexOf('  guard<Args>('));
    expect(guard.slice(0, guard.indexOf('\n  }\n'))).toContain('this.guardrail(');
  });

  it('one critical-path function, in the plan model: the report uses it', () => {
    const chains = all(src).filter((f) => /function (heaviestChain|longestPath|criticalPath)\b/.test(readFileSync(f, 'utf8')));
    expect(chains.map((f) => relative(src, f).split('\\').join('/'))).toEqual(['plan/model/dag.ts']);
    expect(readFileSync(join(src, 'views', 'report', 'data.ts'), 'utf8')).toMatch(/criticalPathOf\(/);
  });

  it('the planning session moves through one table of phases: no list of phases of its own', () => {
    const session = readFileSync(join(dir, 'session', 'planning-session.ts'), 'utf8');
    expect(session).not.toMatch(/#expect\(|#setPhase\(/);
    // The phase changes in one place, `#move`, which asks the table (`nextPhase`); a restore sets where it starts.
    const assignments = session.match(/this\.#phase = /g) ?? [];
    expect(session.slice(session.indexOf('  #move('))).toMatch(/^ {2}#move\(move: PlanningMove\): void \{\n {4}const from = this\.#phase;\n {4}const to = nextPhase\(from, move\);/);
    expect(assignments).toHaveLength(1);
  });

  it('plans retry with the shared retry options', () => {
    const options = readFileSync(join(dir, 'engine', 'options.ts'), 'utf8');
    expect(options).toContain("import { retryOptions } from '../../core/retry.js';");
    expect(options).toMatch(/\.\.\.retryOptions\.shape/);
  });
});
