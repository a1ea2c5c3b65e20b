import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sharedHost } from '../helpers/compiler.js';

const root = join(import.meta.dirname, '..', '..');

/** The optional peers a subpath's public types must not need unless the subpath is about them. */
const peers = ['ai', 'openai', 'ioredis', '@opentelemetry/api', '@modelcontextprotocol/sdk', '@a2a-js/sdk'];

/** The declarations the compiler emits for `entries` (and every source they import), by file. */
function declarationsOf(entries: readonly string[]): Map<string, string> {
  const emitted = new Map<string, string>();
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    declaration: true,
    emitDeclarationOnly: true,
    skipLibCheck: true,
    types: ['node'],
    outDir: join(root, 'dts'),
    rootDir: root,
  };
  const program = ts.createProgram(entries.map((entry) => join(root, entry)), options, sharedHost(options));
  program.emit(undefined, (file, text) => emitted.set(resolve(file), text), undefined, true);
  return emitted;
}

const entries = ['src/adapters/env.ts', 'src/adapters/ai-sdk.ts', 'src/adapters/openai.ts'];
let emitted: Map<string, string> | undefined;

/**
 * The packages the declarations of `entry` import, following its relative
 * imports through the emitted declarations (what a user's compiler reads
 * without `skipLibCheck`).
 */
function packagesNeededBy(entry: string): Set<string> {
  emitted ??= declarationsOf(entries);
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = emitted!.get(file);
    if (text === undefined) throw new Error(`no declarations emitted for ${file}`);
    const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"]+)['"]/g)].map((m) => m[1]!);
    for (const spec of specifiers) {
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.d.ts')));
      else packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  };
  visit(resolve(root, 'dts', entry.replace(/\.ts$/, '.d.ts')));
  return packages;
}

// The compiler emits the declarations of three entry points and all they import: seconds of CPU, more on a loaded machine.
const COMPILER = { timeout: 120_000 };

describe('public types and optional peers', () => {
  it('troupe/adapters/env type-checks without ai, openai or any other optional peer installed', COMPILER, () => {
    const needed = packagesNeededBy('src/adapters/env.ts');
    expect([...needed].filter((p) => peers.includes(p))).toEqual([]);
  });

  it('the adapters on a peer do need it (the check sees imports)', COMPILER, () => {
    expect(packagesNeededBy('src/adapters/ai-sdk.ts').has('ai')).toBe(true);
    expect(packagesNeededBy('src/adapters/openai.ts').has('openai')).toBe(true);
  });
});
