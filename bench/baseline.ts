/**
 * A baseline for the benchmarks' before/after figures (`BENCH_BASELINE=<git
 * ref>`): that ref's sources checked out beside this tree.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

/**
 * How many rounds of processes a benchmark runs per configuration:
 * `BENCH_ROUNDS` (default 3). Each process's JIT and heap differ a little
 * from the next, so more rounds give steadier ratios against a baseline.
 */
export function benchRounds(): number {
  const text = process.env.BENCH_ROUNDS;
  if (text === undefined || text === '') return 3;
  const rounds = Number(text);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`BENCH_ROUNDS must be a whole number of at least 1, got "${text}"`);
  return rounds;
}

/** `git archive <ref>` of the sources into a temporary folder that uses this tree's node_modules. */
export function checkout(ref: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'troupe-baseline-'));
  execFileSync('sh', ['-c', 'git archive "$1" src package.json | tar -x -C "$2"', 'sh', ref, folder], { cwd: root, stdio: 'inherit' });
  symlinkSync(join(root, 'node_modules'), join(folder, 'node_modules'), 'dir');
  return folder;
}

/** A version of troupe a benchmark measures. */
export interface Version {
  name: string;
  /** Path of the version's `src/index.ts`. */
  src: string;
}

/**
 * Run `measure` on this tree and, with `BENCH_BASELINE=<ref>`, on that ref's
 * sources too (checked out for the run, removed after it), with the Node
 * version, the date and the load average at the start printed first.
 */
export async function withVersions(measure: (versions: Version[]) => Promise<void> | void): Promise<void> {
  const versions: Version[] = [{ name: 'this tree', src: join(root, 'src', 'index.ts') }];
  const ref = process.env.BENCH_BASELINE;
  const folder = ref ? checkout(ref) : undefined;
  if (ref && folder) versions.push({ name: ref, src: join(folder, 'src', 'index.ts') });
  console.log(`Node ${process.version}, ${new Date().toISOString().slice(0, 10)}, load average ${loadavg()[0]!.toFixed(1)} at the start\n`);
  try {
    await measure(versions);
  } finally {
    if (folder) rmSync(folder, { recursive: true, force: true });
  }
}
