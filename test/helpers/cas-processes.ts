import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { bundled } from './bundle.js';

const script = join(import.meta.dirname, '..', 'fixtures', 'persistence', 'cas-incrementer.ts');

/**
 * Start `processes` incrementers on one store (`['file', dir]` or
 * `['redis', url, prefix]`), let them all go at once once each is ready, and
 * resolve with the conflicts each saw.
 */
export async function runIncrementers(store: ['file', string] | ['redis', string, string], processes: number, count: number): Promise<number[]> {
  const [kind, where, prefix = ''] = store;
  const children: ChildProcess[] = [];
  const outputs: string[] = [];
  let allReady = () => {};
  const ready = new Promise<void>((resolve) => (allReady = resolve));
  const exits: Array<Promise<void>> = [];
  try {
    for (let p = 0; p < processes; p++) {
      const child = spawn(process.execPath, [bundled(script), kind, where, prefix, String(count), `p${p}`], { stdio: ['pipe', 'pipe', 'pipe'] });
      children.push(child);
      outputs.push('');
      let stderr = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        outputs[p] += chunk;
        if (outputs.length === processes && outputs.every((o) => o.includes('ready\n'))) allReady();
      });
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      exits.push(
        new Promise<void>((resolve, reject) =>
          child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`incrementer p${p} exited with ${code}: ${stderr}`)))),
        ),
      );
    }
    // A child that fails before it is ready rejects here instead of leaving us waiting.
    await Promise.race([ready, Promise.all(exits)]);
    for (const child of children) child.stdin!.write('go\n');
    await Promise.all(exits);
    return outputs.map((o) => Number(/done (\d+)/.exec(o)?.[1] ?? NaN));
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  }
}
