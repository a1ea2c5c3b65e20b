import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adapters, entryPoints } from '../../scripts/entry-points.js';

const root = join(import.meta.dirname, '..', '..');
/** The sources of every public entry point (`scripts/check-exports.mjs` checks the built ones). */
const entries = [...Object.values(entryPoints), ...adapters.map((name) => `src/adapters/${name}.ts`)];

describe('importing troupe', () => {
  it('adds no signal listeners (the package says sideEffects: false)', () => {
    // A fresh process: the test runner's own listeners and module cache play no part.
    const code = `
      const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'];
      const count = () => signals.map((s) => process.listenerCount(s));
      const before = { signals: count(), exit: process.listenerCount('exit') };
      for (const entry of ${JSON.stringify(entries)}) await import(${JSON.stringify(root)} + '/' + entry);
      const after = { signals: count(), exit: process.listenerCount('exit') };
      console.log(JSON.stringify({ before, after }));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' });
    const { before, after } = JSON.parse(out.trim().split('\n').at(-1)!) as { before: unknown; after: unknown };
    expect(after).toEqual(before);
  });
});
