import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

/** Run the conformance suites under node:test in a child process; the TAP summary and the failed tests. */
async function nodeTest(suites: 'good' | 'sloppy') {
  const args = ['--import', 'tsx', '--test', '--test-reporter=tap', join(root, 'test/fixtures/testing/suites-node-test.ts')];
  const out = await promisify(execFile)(process.execPath, args, { cwd: root, env: { ...process.env, SUITES: suites } }).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
  );
  const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(out.stdout)?.[1]);
  const failed = [...out.stdout.matchAll(/^ {4}not ok \d+ - (.*)$/gm)].map((m) => m[1]);
  return { pass: count('pass'), fail: count('fail'), skipped: count('skipped'), failed };
}

describe('the conformance suites under node:test', () => {
  it('run with node:test and pass for the built-in test doubles', async () => {
    const result = await nodeTest('good');
    expect(result.fail).toBe(0);
    expect(result.pass).toBeGreaterThanOrEqual(25);
    expect(result.skipped).toBe(2); // the scripted adapter streams no partial answer; the inMemory strategy is read-only
  });

  it('fail an adapter and a store that answer aborts with the wrong error', async () => {
    const result = await nodeTest('sloppy');
    expect(result.failed).toEqual([
      'rejects an openSession whose signal has aborted, with a CancelledError',
      'rejects promptly with a CancelledError when aborted while waiting',
      'rejects with the time-out itself when a time-out aborts the turn',
      'honours an aborted signal on every call, and does nothing',
    ]);
  });
});
