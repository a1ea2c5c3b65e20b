/**
 * A baseline for the benchmarks' before/after figures (`BENCH_BASELINE=<git
 * ref>`): that ref's sources checked out beside this tree.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

/** `git archive <ref>` of the sources into a temporary folder that uses this tree's node_modules. */
export function checkout(ref: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'troupe-baseline-'));
  execFileSync('sh', ['-c', 'git archive "$1" src package.json | tar -x -C "$2"', 'sh', ref, folder], { cwd: root, stdio: 'inherit' });
  symlinkSync(join(root, 'node_modules'), join(folder, 'node_modules'), 'dir');
  return folder;
}
