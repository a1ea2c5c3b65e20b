/**
 * Load a version of troupe's sources for the benchmark, whatever its layout:
 * older trees export everything from `src/index.ts`, newer ones put plans,
 * stores and the kernel behind subpaths (`src/plan/index.ts`, earlier
 * `src/scheduler/index.ts`, ...).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What the benchmark uses of a version of troupe. */
export type BenchTroupe = typeof import('../../src/plan/index.js') &
  Pick<typeof import('../../src/persistence/index.js'), 'memoryStore'> &
  Pick<typeof import('../../src/core/index.js'), 'sleep'>;

const layers = ['scheduler/index.ts', 'plan/index.ts', 'persistence/index.ts', 'core/index.ts'];

/** The version whose `src/index.ts` is `source`: its root and, when it has them, its layer entry points merged. */
export async function loadTroupe(source: string): Promise<BenchTroupe> {
  return loadMerged<BenchTroupe>(source, layers);
}

/** The exports of the version's root (`source`) and of those of `files` (relative to its `src`) it has, merged (a later file's name wins). */
export async function loadMerged<T>(source: string, files: readonly string[]): Promise<T> {
  const modules = [source, ...files.map((file) => join(dirname(source), file)).filter((file) => existsSync(file))];
  const loaded = await Promise.all(modules.map(async (file) => (await import(pathToFileURL(file).href)) as Record<string, unknown>));
  return Object.assign({}, ...loaded) as T;
}

/** The module of a version that holds the run-log writer (`createRunLogWriter`). */
export async function loadRunLogWriter(source: string): Promise<typeof import('../../src/core/run-log-writer.js')['createRunLogWriter']> {
  const candidates = ['core/run-log-writer.ts', 'persistence/run-log.ts'].map((file) => join(dirname(source), file));
  const file = candidates.find((f) => existsSync(f));
  if (!file) throw new Error(`No run-log writer next to ${source}`);
  const mod = (await import(pathToFileURL(file).href)) as { createRunLogWriter: typeof import('../../src/core/run-log-writer.js')['createRunLogWriter'] };
  return mod.createRunLogWriter;
}
