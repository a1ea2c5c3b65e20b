import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sharedHost } from './helpers/compiler.js';

// Every TypeScript snippet of the README and docs/ is compiled against the
// sources, like the examples, so that a renamed option or a moved export
// breaks a test rather than a reader's copy. A snippet is a module of its
// own; the names a snippet uses without declaring them (an `adapter`, a
// `repoDir`) are declared once in test/fixtures/docs/globals.d.ts, and the
// packages it imports that are not installed in test/fixtures/docs/modules.d.ts.
const root = join(import.meta.dirname, '..');

/** The Markdown files whose snippets are checked: README.md and docs/ (the generated API reference aside). */
function markdownFiles(): string[] {
  const files = [join(root, 'README.md')];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'api') walk(path);
      else if (entry.isFile() && entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(root, 'docs'));
  return files.sort();
}

interface Snippet {
  /** Where it is: `docs/x.md:12`. */
  where: string;
  /** Its line in the Markdown file (1-based, the fence's). */
  line: number;
  code: string;
}

/** The ```ts and ```typescript blocks of a Markdown file, fences of three or more backticks. */
function snippets(file: string): Snippet[] {
  const lines = readFileSync(file, 'utf8').split(/\r?\n/);
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(ts|typescript)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i]!.trimEnd() !== fence; i++) body.push(lines[i]!);
    out.push({ where: `${relative(root, file)}:${start + 1}`, line: start + 1, code: body.join('\n') });
  }
  return out;
}

/** Compile the snippets together (one program, each its own module) and return each one's errors. */
function compile(list: Snippet[]): Map<string, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
  const options: ts.CompilerOptions = { ...config.options, noUnusedLocals: false, noUnusedParameters: false, noEmit: true };
  const dir = join(root, 'test', 'fixtures', 'docs');
  const files = new Map<string, Snippet>();
  list.forEach((s, n) => files.set(join(dir, `snippet-${n}.ts`), s));
  const host = sharedHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (name) => (files.has(name) ? `${files.get(name)!.code}\nexport {};\n` : readFile(name));
  host.fileExists = (name) => files.has(name) || fileExists(name);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError) => {
    const snippet = files.get(name);
    return snippet ? ts.createSourceFile(name, `${snippet.code}\nexport {};\n`, language) : getSourceFile(name, language, onError);
  };
  const program = ts.createProgram([...files.keys(), join(dir, 'globals.d.ts'), join(dir, 'modules.d.ts')], options, host);
  const errors = new Map<string, string[]>();
  for (const [name, snippet] of files) {
    const source = program.getSourceFile(name)!;
    const found = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => {
      const at = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line;
      return `${relative(root, snippet.where.split(':')[0]!)}:${snippet.line + 1 + at}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
    errors.set(snippet.where, found);
  }
  for (const file of ['globals.d.ts', 'modules.d.ts']) {
    const source = program.getSourceFile(join(dir, file))!;
    errors.set(file, program.getSemanticDiagnostics(source).map((d) => `${file}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`));
  }
  return errors;
}

describe('the snippets of the docs', () => {
  const all = markdownFiles().flatMap(snippets);

  it('are found (README.md and docs/)', () => {
    expect(all.length).toBeGreaterThan(40);
  });

  it('docs/adapters.md shows ToolCall and ToolResult with the members of the kernel\'s', () => {
    const excerpt = all.find((s) => s.where.startsWith(join('docs', 'adapters.md')) && s.code.includes('interface ModelAdapter'))!;
    const members = (code: string, name: string) => {
      const source = ts.createSourceFile('x.ts', code, ts.ScriptTarget.ES2022);
      const found = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name);
      return found?.members.map((m) => `${m.name?.getText(source)}${m.questionToken ? '?' : ''}: ${(m as ts.PropertySignature).type?.getText(source)}`);
    };
    const kernel = readFileSync(join(root, 'src', 'core', 'adapter.ts'), 'utf8');
    for (const name of ['ToolCall', 'ToolResult']) {
      expect(members(excerpt.code, name), name).toEqual(members(kernel, name));
      expect(members(excerpt.code, name)!.length, name).toBeGreaterThan(2);
    }
  });

  it('compile against the sources', { timeout: 120_000 }, () => {
    const errors = compile(all);
    const failed = [...errors.values()].flat();
    expect(failed).toEqual([]);
  });
});
