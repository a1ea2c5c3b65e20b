import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const src = join(root, 'src');

/** Every TypeScript file of `src/`; without `page`, the report page's browser script (it has its own tsconfig and imports nothing of troupe). */
function sourceFiles(dir = src, page = false): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return !page && path.endsWith(join('report', 'page')) ? [] : sourceFiles(path, page);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The relative modules `file` imports: static and type imports, re-exports, `import()` and `typeof import()`. */
function importsOf(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const specs: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      specs.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      specs.push(node.arguments[0].text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      specs.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return specs.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')));
}

/** The layer table of docs/architecture.md: folder (relative to the repository) → level. */
function layerTable(): Map<string, number> {
  const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Layers'), doc.indexOf('\n## ', doc.indexOf('## Layers') + 1));
  const levels = new Map<string, number>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const level = Number(cells[1]);
    if (!/^\d+$/.test(cells[1] ?? '')) continue;
    for (const [, folder] of (cells[3] ?? '').matchAll(/`(src\/[^`]+\/)`/g)) {
      if (folder!.endsWith('<name>/')) {
        const parent = folder!.slice(0, -'<name>/'.length);
        for (const name of readdirSync(join(root, parent))) if (statSync(join(root, parent, name)).isDirectory()) levels.set(`${parent}${name}/`, level);
      } else {
        levels.set(folder!, level);
      }
    }
  }
  return levels;
}

const files = sourceFiles();
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const levels = layerTable();

/** The layer folder of a file (the longest folder of the table that holds it). */
function folderOf(file: string): string | undefined {
  const rel = `${relative(root, file).split('\\').join('/')}`;
  return [...levels.keys()].filter((f) => rel.startsWith(f)).sort((a, b) => b.length - a.length)[0];
}

describe('the layers of src/ (docs/architecture.md)', () => {
  it('the table names every folder of src/ and only real ones', () => {
    const folders = new Set(files.map((f) => relative(root, dirname(f)).split('\\').join('/') + '/').filter((f) => f !== 'src/'));
    const unplaced = [...folders].filter((f) => ![...levels.keys()].some((l) => f.startsWith(l)));
    expect(unplaced).toEqual([]);
    for (const folder of levels.keys()) expect(statSync(join(root, folder)).isDirectory(), folder).toBe(true);
    expect(levels.get('src/core/')).toBe(0);
  });

  it('no import runs up the layers, and folders of one level do not import each other', () => {
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      const from = folderOf(file);
      if (from === undefined) continue; // src/index.ts: the root entry point sits above every level
      for (const dep of deps) {
        const to = folderOf(dep);
        if (to === undefined || to === from) continue;
        if (levels.get(to)! >= levels.get(from)!) wrong.push(`${relative(root, file)} (${from}, level ${levels.get(from)}) imports ${relative(root, dep)} (${to}, level ${levels.get(to)})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('no modules import each other in a ring', () => {
    const rings: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        rings.push([...path.slice(path.indexOf(file)), file].map((f) => relative(root, f)).join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const f of files) visit(f, []);
    expect(rings).toEqual([]);
  });
});

describe('the functions of src/', () => {
  it('are at most 100 lines long (the plan layer: 60, see test/plan/structure.test.ts)', () => {
    const long: string[] = [];
    for (const file of sourceFiles(src, true)) {
      const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const lines = sf.getLineAndCharacterOfPosition(node.end).line - sf.getLineAndCharacterOfPosition(node.getStart()).line + 1;
          if (lines > 100) long.push(`${relative(root, file)}: ${node.name?.getText() ?? 'a function'} (${lines} lines)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(sf);
    }
    expect(long).toEqual([]);
  });
});

describe('one implementation per concept (issue #33)', () => {
  const file = (path: string) => join(src, ...path.split('/'));
  const imports = (path: string) => graph.get(file(path)) ?? [];

  it("orchestrate's broadcast and sequential modes run the broadcast and sequential patterns", () => {
    expect(imports('patterns/orchestrate.ts')).toEqual(expect.arrayContaining([file('patterns/broadcast.ts'), file('patterns/sequential.ts')]));
  });

  it('broadcast, advisors and orchestrate fan out through one helper, the only pattern module that limits parallelism itself', () => {
    for (const pattern of ['broadcast', 'advisors', 'orchestrate']) expect(imports(`patterns/${pattern}.ts`), pattern).toContain(file('patterns/fan-out.ts'));
    const limiting = sourceFiles(file('patterns')).filter((f) => /from 'p-limit'/.test(readFileSync(f, 'utf8')));
    expect(limiting.map((f) => relative(src, f).split('\\').join('/'))).toEqual(['patterns/fan-out.ts']);
  });
});

describe('one implementation per concept: run logs and the event fold', () => {
  /** The source of every file of src/ (the report page's bundled script left out), by path relative to the repository. */
  const sources = new Map(files.filter((f) => !f.endsWith('page-script.ts')).map((f) => [relative(root, f).split('\\').join('/'), readFileSync(f, 'utf8')]));
  /**
   * The plan layer's statistics still read the run log and count agents
   * their own way; they move to the kernel's reader and fold when the plan
   * layer's folders land (docs/conventions.md, issue #33).
   */
  const planStatistics = /^src\/(scheduler|plan\/learning)\/(learning|outcome-collector)\.ts$/;
  /** A command's stdout (the process adapter's `output: 'jsonl'`) is not a run log: its lines that are not JSON are the command's log. */
  const commandOutput = 'src/adapters/process.ts';

  it('run logs are read through the kernel\'s run-log reader (one event test, one JSON-lines parser)', () => {
    const readers: string[] = [];
    for (const [file, text] of sources) {
      if (file === 'src/core/run-log-reader.ts' || file === commandOutput || planStatistics.test(file)) continue;
      if (/\.read\(\s*runEventsStream\(/.test(text)) readers.push(`${file}: reads a run log's stream itself`);
      if (/function (isEvent|isEventRecord|parseJsonl|parseJsonLines)\b/.test(text)) readers.push(`${file}: has its own event test or JSON-lines parser`);
      if (/split\('\\n'\)[\s\S]{0,200}JSON\.parse/.test(text)) readers.push(`${file}: parses JSON lines itself`);
    }
    expect(readers).toEqual([]);
  });

  it('what counts as an agent is decided once, in the kernel\'s event fold', () => {
    const rules: string[] = [];
    for (const [file, text] of sources) {
      if (file === 'src/core/event-fold.ts' || planStatistics.test(file)) continue;
      if (/kind === 'team-member'|'team-member'\s*[,\]]\s*[\s\S]{0,40}\bhas\(|AGENT_KINDS/.test(text)) rules.push(file);
    }
    expect(rules).toEqual([]);
  });
});
