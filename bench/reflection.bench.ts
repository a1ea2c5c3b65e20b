/**
 * Reflection parsers and the stall detector on adversarial inputs of 0.25,
 * 0.5 and 1 MB. Linear time shows as a flat "ms/MB" across sizes; the ratio
 * compares each with `text.split('\n')` over the same input, measured in the
 * same run.
 *
 *   npm run bench -- reflection
 */
import { performance } from 'node:perf_hooks';
import { parseAssignments } from '../src/reflection/assignments.js';
import { parseEvaluation, parseVerdict } from '../src/reflection/evaluation.js';
import { parseSentinels, stripSentinels } from '../src/reflection/sentinels.js';
import { StallDetector } from '../src/reflection/stall.js';

const MB = 1024 * 1024;
const SIZES = [0.25, 0.5, 1];

function fill(unit: (i: number) => string, bytes: number): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < bytes; i++) {
    const u = unit(i);
    parts.push(u);
    length += u.length;
  }
  return parts.join('').slice(0, bytes);
}

const inputs: Record<string, (bytes: number) => string> = {
  '@worker: repeated': (b) => fill(() => '@worker:', b),
  '@worker:x lines': (b) => fill((i) => `@worker:w${i % 50}\ntask ${i}\n`, b),
  '[[ repeated': (b) => fill(() => '[[', b),
  'one long line': (b) => fill((i) => `t${i} `, b),
};

const workers = Array.from({ length: 10 }, (_, i) => `w${i}`);
const subjects: Record<string, (text: string) => unknown> = {
  "baseline split('\\n')": (t) => t.split('\n'),
  parseSentinels: (t) => parseSentinels(t),
  stripSentinels: (t) => stripSentinels(t),
  parseAssignments: (t) => parseAssignments(t, workers),
  parseEvaluation: (t) => parseEvaluation(`SCORE: ${t}`),
  parseVerdict: (t) => parseVerdict(`FAIL: ${t}`),
  'StallDetector.check x3': (t) => {
    const s = new StallDetector();
    s.check(t);
    s.check(t);
    return s.check(`${t} x`);
  },
};

/** Milliseconds per call: the best of 5 batches, each repeating `fn` for at least 20 ms. */
function time(fn: () => unknown): number {
  fn(); // warm-up
  let best = Number.POSITIVE_INFINITY;
  for (let batch = 0; batch < 5; batch++) {
    let calls = 0;
    const start = performance.now();
    let elapsed = 0;
    do {
      fn();
      calls++;
      elapsed = performance.now() - start;
    } while (elapsed < 20);
    best = Math.min(best, elapsed / calls);
  }
  return best;
}

export default async function reflectionBench(): Promise<void> {
  for (const [inputName, make] of Object.entries(inputs)) {
    console.log(`\n### ${inputName}\n`);
    console.log(`| function | ${SIZES.map((s) => `ms/MB @ ${s} MB`).join(' | ')} | × baseline @ 1 MB | growth 0.25→1 MB |`);
    console.log(`| --- | ${SIZES.map(() => '---:').join(' | ')} | ---: | ---: |`);
    const texts = SIZES.map((s) => make(Math.round(s * MB)));
    const baseline = texts.map((t) => time(() => t.split('\n')));
    for (const [name, fn] of Object.entries(subjects)) {
      const ms = texts.map((t) => time(() => fn(t)));
      const perMb = ms.map((m, i) => m / SIZES[i]!);
      const ratio = ms[2]! / Math.max(baseline[2]!, 1e-3);
      const growth = ms[2]! / Math.max(ms[0]!, 1e-3);
      console.log(`| ${name} | ${perMb.map((v) => v.toFixed(2)).join(' | ')} | ${ratio.toFixed(1)} | ${growth.toFixed(1)}× (linear: 4×) |`);
    }
  }
}
