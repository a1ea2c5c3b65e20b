#!/usr/bin/env node
// Runs the whole suite several times in a row with the machine loaded, and
// lists every test that failed even once: `npm run test:soak` (ten runs,
// one CPU burner), `npm run test:soak -- --runs 3 --burners 2`.
// A burner is a process that spins one core; the suite's own workers share
// the rest. Each run's JSON report goes to test-artifacts/soak/.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  const value = at > 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} takes a whole number, got ${process.argv[at + 1]}`);
  return value;
};
const runs = arg('runs', 10);
const burnerCount = arg('burners', 1);
const root = join(import.meta.dirname, '..');
const out = join(root, 'test-artifacts', 'soak');
mkdirSync(out, { recursive: true });

const burners = Array.from({ length: burnerCount }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const stop = () => burners.forEach((b) => b.kill('SIGKILL'));
process.on('exit', stop);
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));

/** Failures by test: how many runs each failed in. */
const failed = new Map();
const rows = [];
for (let i = 1; i <= runs; i++) {
  const report = join(out, `run-${i}.json`);
  const started = Date.now();
  const code = await new Promise((resolve) => {
    const child = spawn('npx', ['vitest', 'run', '--reporter=json', `--outputFile=${report}`], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: process.env });
    child.on('exit', (c) => resolve(c ?? 1));
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  let tests = 0;
  let failures = 0;
  try {
    const json = JSON.parse(readFileSync(report, 'utf8'));
    tests = json.numTotalTests;
    failures = json.numFailedTests;
    const count = (key) => failed.set(key, (failed.get(key) ?? 0) + 1);
    for (const file of json.testResults) {
      const name = file.name.slice(root.length + 1);
      for (const t of file.assertionResults) if (t.status === 'failed') count(`${name} > ${t.fullName}`);
      // A file that failed outside its tests (an import, a hook).
      if (file.status === 'failed' && file.assertionResults.every((t) => t.status !== 'failed')) count(`${name} (the file: ${String(file.message).split('\n')[0]})`);
    }
  } catch {
    failed.set(`run ${i}: no report (exit code ${code})`, 1);
  }
  rows.push(`run ${i}: exit ${code}, ${tests} tests, ${failures} failed, ${seconds} s`);
  console.log(rows.at(-1));
}
stop();
console.log(`\n${runs} runs with ${burnerCount} CPU burner(s) beside them: ${failed.size === 0 ? 'no test failed' : `${failed.size} test(s) failed at least once`}`);
for (const [name, count] of [...failed].sort((a, b) => b[1] - a[1])) console.log(`  ${count}× ${name}`);
process.exitCode = failed.size === 0 ? 0 : 1;
