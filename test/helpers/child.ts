// A child process running a TypeScript fixture (bundled: ./bundle.ts); its output is collected.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { bundled } from './bundle.js';


/** A running fixture: its output so far, and a promise of its exit. */
export interface Child {
  readonly process: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; output: string; stderr: string }>;
  kill(): void;
}

/** Run `fixture` (a path under test/fixtures) with `args`. */
export function runFixture(fixture: string, args: string[]): Child {
  const child = spawn(process.execPath, [bundled(join(import.meta.dirname, '..', 'fixtures', fixture)), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<{ code: number | null; output: string; stderr: string }>((resolve) => child.once('exit', (code) => resolve({ code, output: out, stderr: err })));
  return { process: child, output: () => out, exited, kill: () => void (child.exitCode === null && child.kill('SIGKILL')) };
}
