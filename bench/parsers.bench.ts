/**
 * Every public reader of model output and files on its pathological inputs
 * of 0.25, 0.5 and 1 MB: the median time of each size, the doubling ratio
 * (a linear reader about doubles: at most 2.3×), ms per MB, and the ratio to
 * `text.split('\n')` over the same input, measured in the same run.
 *
 *   npm run bench -- parsers
 *   node --expose-gc --import tsx bench/index.ts parsers   # steadier: collects garbage between runs
 */
import { performance } from 'node:perf_hooks';
import { parseRecording } from '../src/adapters/recording.js';
import { readFrontMatterData, readFrontMatterLeniently, startsWithYamlKey } from '../src/agents/front-matter.js';
import { safeParseAgentFile } from '../src/agents/parse.js';
import { parseHandoffLine } from '../src/patterns/handoff-choices.js';
import { displayName } from '../src/squad/slug.js';
import { readTaskList } from '../src/coordination/lead-prompts.js';
import { parseLeadActions, parseQuestion } from '../src/coordination/tools.js';
import { parseRouteLine } from '../src/patterns/router.js';
import { parseTeamReply } from '../src/patterns/team-protocol.js';
import { memoryStore } from '../src/core/memory-store.js';
import { runEventsStream, timeline } from '../src/persistence/run-log.js';
import { parseAssignments } from '../src/reflection/assignments.js';
import { parseEvaluation, parseVerdict } from '../src/reflection/evaluation.js';
import { parseSentinels, stripSentinels } from '../src/reflection/sentinels.js';
import { jaccard, StallDetector, tokenSet } from '../src/reflection/stall.js';
import { extractJson, validatePlanJson } from '../src/plan/model/plan.js';
import { capEntries, splitEntries } from '../src/squad/caps.js';
import { parseTeamMd } from '../src/squad/team-md.js';
import { fencedBlocks } from '../src/text/fences.js';
import { normalizeText } from '../src/text/lines.js';
import { nameKey } from '../src/text/names.js';
import { parseMarkdown } from '../src/ui/markdown.js';
import { answerOf } from '../src/integrations/a2a/messages.js';
import { userMessage } from '../test/helpers/a2a.js';
import { parseJsonLines } from '../src/core/run-log-reader.js';

const MB = 1024 * 1024;
/** Worker names that share their first seven words. */
const LONG_NAMES = ['code review lead one two three four five', 'code review lead one two three four', 'code'];
const SIZES = [0.25, 0.5, 1];

/** `unit(i)` repeated to exactly `bytes` characters, after `head`. */
function fill(bytes: number, unit: (i: number) => string, head = '', tail = ''): string {
  const parts: string[] = [head];
  let length = head.length + tail.length;
  for (let i = 0; length < bytes; i++) {
    const u = unit(i);
    parts.push(u);
    length += u.length;
  }
  return (parts.join('') + tail).slice(0, bytes - tail.length) + tail;
}

/** `Done.` then whole sentinels and blank lines to about `bytes`: every one of them closes the answer. */
const closingRun = (bytes: number) => `Done.${'\n [[NEEDS_ITERATION]] [[NEEDS_ITERATION]]'.repeat(Math.floor((bytes - 5) / 41))}`;

type Case = { reader: string; input: string; make: (bytes: number) => string; run: (text: string) => unknown };

const plan = (i: number) => `{"sequenceIndex": ${i}, "title": "t${i}", "prompt": "do part ${i} of it", "dependsOnIndexes": [], "complexity": "Low", "role": "Generic"},`;
const cases: Case[] = [
  { reader: 'extractJson', input: 'open fence, white space, no close', make: (b) => fill(b, () => ' \n', '```'), run: (t) => extractJson(t) },
  { reader: 'extractJson', input: '`{` nested, never closed', make: (b) => fill(b, () => '{'), run: (t) => extractJson(t) },
  { reader: 'extractJson', input: '`[` nested and closed around junk', make: (b) => fill(b / 2, () => '[') + fill(b / 2, () => ']', 'x'), run: (t) => extractJson(t, 'array') },
  { reader: 'extractJson', input: '`{name}` placeholders', make: (b) => fill(b, (i) => `Use {name${i}} here. `), run: (t) => extractJson(t) },
  { reader: 'extractJson', input: 'prose quotes inside brackets', make: (b) => fill(b, () => '[say "hi'), run: (t) => extractJson(t) },
  { reader: 'validatePlanJson', input: 'a large plan with trailing commas', make: (b) => fill(b, plan, '```json\n{"planSummary": "s", "chunks": [', ']}\n```'), run: (t) => validatePlanJson(t) },
  { reader: 'readTaskList', input: '`[{"title":` repeated', make: (b) => fill(b, () => '[{"title":'), run: (t) => readTaskList(t) },
  { reader: 'parseTeamMd', input: '`mode:` then spaces', make: (b) => fill(b, () => ' ', '# T\nmode:', '!\n'), run: (t) => parseTeamMd(t) },
  { reader: 'parseTeamMd', input: '`#` spaces U+2028', make: (b) => fill(b, () => ' ', '#', '\u2028\n'), run: (t) => parseTeamMd(t) },
  { reader: 'parseTeamMd', input: 'table cells of `![`', make: (b) => fill(b, () => '| ![ | _x | ** |\n', '## Members\n| Name | Role | Status |\n|---|---|---|\n'), run: (t) => parseTeamMd(t) },
  { reader: 'parseTeamMd', input: '### sections with role lines', make: (b) => fill(b, (i) => `### M${i}\n- **Role:** r ${'_'.repeat(i % 40)}\n`), run: (t) => parseTeamMd(t) },
  { reader: 'splitEntries', input: 'headings, rules and fences', make: (b) => fill(b, (i) => (i % 3 === 0 ? '---\n\n## e\n' : i % 3 === 1 ? '```\n## in\n' : '~~~~\n')), run: (t) => splitEntries(t) },
  { reader: 'capEntries', input: '`## ` entries', make: (b) => fill(b, (i) => `## Entry ${i}\nsome text\n`), run: (t) => capEntries(t, 8000) },
  { reader: 'parseQuestion', input: 'newlines', make: (b) => fill(b, () => '\n'), run: (t) => parseQuestion(t) },
  { reader: 'parseQuestion', input: '`QUESTION:` then spaces', make: (b) => fill(b, () => ' ', 'QUESTION:'), run: (t) => parseQuestion(t) },
  { reader: 'parseLeadActions', input: '`APPROVE a a a ...`', make: (b) => fill(b, () => ' a', 'APPROVE'), run: (t) => parseLeadActions(t) },
  { reader: 'parseLeadActions', input: 'action lines, half fenced', make: (b) => fill(b, (i) => (i % 20 === 0 ? '```\n' : `CANCEL t${i}: x\n`)), run: (t) => parseLeadActions(t) },
  { reader: 'parseRouteLine', input: '`ROUTE:` then spaces', make: (b) => fill(b, () => ' ', 'ROUTE:', '!'), run: (t) => parseRouteLine(t) },
  { reader: 'parseSentinels', input: 'fence lines of growing length', make: (b) => fill(b, (i) => `${'`'.repeat(3 + (i % 5))}\n[[REFLECTION_COMPLETE]]\n`), run: (t) => parseSentinels(t) },
  { reader: 'stripSentinels', input: '`[[` repeated', make: (b) => fill(b, () => '[['), run: (t) => stripSentinels(t) },
  { reader: 'parseSentinels', input: 'a closing run of sentinels over blank lines', make: closingRun, run: (t) => parseSentinels(t) },
  { reader: 'stripSentinels', input: 'a closing run of sentinels over blank lines', make: closingRun, run: (t) => stripSentinels(t) },
  { reader: 'parseTeamReply', input: 'marker lines and fences', make: (b) => fill(b, (i) => (i % 7 === 0 ? '~~~\n' : '[[VOTE_CONCLUDE]]\n')), run: (t) => parseTeamReply(t) },
  { reader: 'parseAssignments', input: '`@worker:` repeated', make: (b) => fill(b, () => '@worker:'), run: (t) => parseAssignments(t, ['a', 'b']) },
  { reader: 'parseAssignments', input: '`@worker:` lines, fenced `@`', make: (b) => fill(b, (i) => (i % 10 === 0 ? '```\n@worker:b\n' : `@worker:a\ntask ${i}\n`)), run: (t) => parseAssignments(t, ['a', 'b']) },
  { reader: 'parseAssignments', input: 'names of seven and eight words sharing seven', make: (b) => fill(b, () => '@Worker:code review lead one two three four six\n'), run: (t) => parseAssignments(t, LONG_NAMES) },
  { reader: 'parseAssignments', input: '`@worker:` and emoji words on one line', make: (b) => fill(b, () => '@worker:a 🚀 🚀 '), run: (t) => parseAssignments(t, ['a b', 'a']) },
  { reader: 'nameKey', input: 'words and emoji', make: (b) => fill(b, () => 'Code 🚀 '), run: (t) => nameKey(t) },
  { reader: 'parseEvaluation', input: '`SCORE:` and a long line', make: (b) => fill(b, () => '9', 'SCORE: '), run: (t) => parseEvaluation(t) },
  { reader: 'parseEvaluation', input: 'a rationale ending in `[[A]]` markers', make: (b) => `SCORE: 0.5\nRATIONALE: x${' [[A]]'.repeat(Math.floor((b - 24) / 6))}`, run: (t) => parseEvaluation(t) },
  { reader: 'parseVerdict', input: '`FAIL:` and a long reason', make: (b) => fill(b, () => ' -', 'FAIL:'), run: (t) => parseVerdict(t) },
  { reader: 'StallDetector.check', input: 'distinct tokens (one check)', make: (b) => fill(b, (i) => `t${i} `), run: (t) => new StallDetector().check(t) },
  { reader: 'jaccard', input: 'distinct tokens (two texts of half the size)', make: (b) => fill(b, (i) => `t${i} `), run: (t) => jaccard(t.slice(0, t.length / 2), t.slice(t.length / 2)) },
  { reader: 'tokenSet', input: 'distinct tokens', make: (b) => fill(b, (i) => `t${i} `), run: (t) => tokenSet(t) },
  { reader: 'safeParseAgentFile', input: 'front matter of blank lines (bounded)', make: (b) => fill(b, () => '\n', '---\n'), run: (t) => safeParseAgentFile(t, { name: 'a' }) },
  { reader: 'safeParseAgentFile', input: 'small front matter, long body', make: (b) => fill(b, () => 'text\r\n', '---\nmodel: m\n---\n'), run: (t) => safeParseAgentFile(t, { name: 'a' }) },
  { reader: 'parseRecording', input: 'turn records', make: (b) => fill(b, (i) => `${JSON.stringify({ v: 1, adapter: 'x', agent: 'a', session: 1, turn: i + 1, spec: { agent: 'a' }, input: 'hi', reply: { text: 'ok', toolCalls: [] } })}\r\n`), run: (t) => parseRecording(t) },
  { reader: 'startsWithYamlKey', input: 'blank lines, then a key', make: (b) => fill(b, () => ' \n', '', 'model: m'), run: (t) => startsWithYamlKey(t) },
  { reader: 'parseHandoffLine', input: '`HANDOFF:` lines, half fenced', make: (b) => fill(b, (i) => (i % 10 === 0 ? '```\n' : `HANDOFF: step ${i}\n`)), run: (t) => parseHandoffLine(t) },
  { reader: 'splitEntries', input: 'a rule, then dated headings', make: (b) => fill(b, (i) => `### 2026-03-${String(1 + (i % 28)).padStart(2, '0')}: d${i}\ntext\n`, '## A\n---\n## B\n---\n'), run: (t) => splitEntries(t) },
  { reader: 'capEntries', input: 'dated entries, newest first', make: (b) => fill(b, (i) => `## ${String(9999 - (i % 9000)).padStart(4, '0')}-01-01: d\ntext\n`), run: (t) => capEntries(t, 8000) },
  { reader: 'displayName', input: 'emoji and letters', make: (b) => fill(b, () => '🏗️ a '), run: (t) => displayName(t) },
  { reader: 'normalizeText', input: 'lone CRs', make: (b) => fill(b, () => '\r'), run: (t) => normalizeText(t) },
  { reader: 'parseMarkdown', input: '`[` then `]` (nested brackets)', make: (b) => '['.repeat(b / 2) + ']'.repeat(b / 2), run: (t) => parseMarkdown(t) },
  { reader: 'parseMarkdown', input: '`[a](` link openers', make: (b) => fill(b, () => '[a]('), run: (t) => parseMarkdown(t) },
  { reader: 'parseMarkdown', input: '`![a](b ` image openers', make: (b) => fill(b, () => '![a](b '), run: (t) => parseMarkdown(t) },
  { reader: 'parseMarkdown', input: 'emphasis openers `**a _b `', make: (b) => fill(b, () => '**a _b '), run: (t) => parseMarkdown(t) },
  { reader: 'parseMarkdown', input: 'backticks `` `a`` ``', make: (b) => fill(b, () => '`a``'), run: (t) => parseMarkdown(t) },
  { reader: 'parseMarkdown', input: '`>` quote markers', make: (b) => fill(b, () => '>', '', ' a'), run: (t) => parseMarkdown(t) },
  { reader: 'parseMarkdown', input: 'list items at growing depth', make: (b) => fill(b, (i) => `${'  '.repeat(Math.min(i, 200))}1. a\n`), run: (t) => parseMarkdown(t) },
  { reader: 'parseMarkdown', input: 'fence lines', make: (b) => fill(b, () => '```\n'), run: (t) => parseMarkdown(t) },
  { reader: 'parseMarkdown', input: 'a table row of `|b` cells', make: (b) => fill(b, () => '|b', '|a|\n|-|\n'), run: (t) => parseMarkdown(t) },
  { reader: 'answerOf', input: 'an approval of spaces, then `!`', make: (b) => `${' '.repeat(b / 2)}x${'!'.repeat(b / 2)}`, run: (t) => answerOf('approval', userMessage(t)) },
  { reader: 'parseJsonLines', input: '`{}` lines, every line end', make: (b) => fill(b, (i) => (i % 2 ? '{}\r' : '{}\n')), run: (t) => parseJsonLines(t, 'bench') },
  { reader: 'fencedBlocks', input: 'fences opening and closing', make: (b) => fill(b, (i) => (i % 2 === 0 ? '````ts\n' : '```\n````\n')), run: (t) => fencedBlocks(t) },
];

/** Milliseconds per call of `fn`, repeated for at least 10 ms. */
function once(fn: () => unknown): number {
  let calls = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    fn();
    calls++;
    elapsed = performance.now() - start;
  } while (elapsed < 10);
  return elapsed / calls;
}

const gc = (globalThis as { gc?: () => void }).gc;

/**
 * Median milliseconds of each of `fns` over 9 rounds (after a warm-up). The
 * sizes are measured in turn within each round, so that the load of a
 * shared machine weighs on all of them alike.
 */
function medians(fns: Array<() => unknown>): number[] {
  for (const fn of fns) fn();
  const runs: number[][] = fns.map(() => []);
  for (let round = 0; round < 9; round++) {
    fns.forEach((fn, i) => {
      gc?.();
      runs[i]!.push(once(fn));
    });
  }
  return runs.map((r) => r.sort((a, b) => a - b)[4]!);
}

/** A memory store holding a run log of about `bytes` of JSON: events, and every tenth record junk. */
async function runLogOf(bytes: number) {
  const store = memoryStore();
  const stream = runEventsStream('bench');
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const record = i % 10 === 3 ? null : { type: 'op.started', runId: 'bench', time: i, opId: `op-${i}`, kind: 'agent', name: 'a' };
    size += JSON.stringify(record).length + 1;
    await store.append(stream, record);
  }
  return store;
}

/** {@link medians} for an async function: 9 interleaved rounds of one call each. */
async function asyncMedians(fns: Array<() => Promise<unknown>>): Promise<number[]> {
  for (const fn of fns) await fn();
  const runs: number[][] = fns.map(() => []);
  for (let round = 0; round < 9; round++) {
    for (const [i, fn] of fns.entries()) {
      gc?.();
      const start = performance.now();
      await fn();
      runs[i]!.push(performance.now() - start);
    }
  }
  return runs.map((r) => r.sort((a, b) => a - b)[4]!);
}

const fmt = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));

export default async function parsersBench(): Promise<void> {
  console.log('| reader | input | ms @ 0.25 MB | ms @ 0.5 MB | ms @ 1 MB | doubling 0.25→0.5 | doubling 0.5→1 | growth 0.25→1 (linear 4×) | ms/MB @ 1 MB | × split @ 1 MB |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  const row = (reader: string, input: string, ms: number[], baseline: number | undefined) => {
    const ratio = baseline === undefined ? '–' : `${fmt(ms[2]! / Math.max(baseline, 1e-3))}×`;
    console.log(`| ${reader} | ${input} | ${ms.map(fmt).join(' | ')} | ${fmt(ms[1]! / Math.max(ms[0]!, 1e-3))}× | ${fmt(ms[2]! / Math.max(ms[1]!, 1e-3))}× | ${fmt(ms[2]! / Math.max(ms[0]!, 1e-3))}× | ${fmt(ms[2]!)} | ${ratio} |`);
  };
  for (const c of cases) {
    const texts = SIZES.map((s) => c.make(Math.round(s * MB)));
    const [baseline, ...ms] = medians([() => texts[2]!.split('\n'), ...texts.map((t) => () => c.run(t))]);
    row(c.reader, c.input, ms, baseline);
  }
  const stores = await Promise.all(SIZES.map((s) => runLogOf(Math.round(s * MB))));
  row('timeline', 'events and junk records (size of their JSON)', await asyncMedians(stores.map((store) => () => timeline('bench', { store, onSkipped: () => undefined }))), undefined);
  frontMatterTable();
}

/**
 * The lenient front-matter reading, within the front matter's bound (16, 32
 * and 64 K characters): a strict parse that fails, one pass over the lines,
 * one more parse. Its baseline is the strict reading of the same block
 * written as valid YAML (every value quoted), measured in the same run.
 */
function frontMatterTable(): void {
  const K = 1024;
  const block = (chars: number, quoted: boolean, line: (i: number) => [string, string]) =>
    ({ present: true, language: '', body: '', matter: fill(chars, (i) => {
      const [key, value] = line(i);
      return `${key}: ${quoted ? JSON.stringify(value) : value}\n`;
    }) });
  const inputs: Array<[string, (i: number) => [string, string]]> = [
    ['lines `kN: a: b` (every one read leniently)', (i) => [`k${i}`, 'a: b']],
    ['`description:` and one line of `a: ` (64 K at most)', () => ['description', 'a: '.repeat(K)]],
  ];
  console.log('\n| reader | input | ms @ 16 K | ms @ 32 K | ms @ 64 K | growth 16→64 K (linear 4×) | valid YAML @ 64 K (ms) | × valid YAML @ 64 K |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [input, line] of inputs) {
    const sizes = [16 * K, 32 * K, 64 * K - 8];
    const lenient = sizes.map((n) => block(n, false, line));
    const valid = block(64 * K - 8, true, line);
    const [baseline, ...ms] = medians([() => readFrontMatterData(valid), ...lenient.map((b) => () => readFrontMatterLeniently(b))]);
    console.log(`| readFrontMatterLeniently | ${input} | ${ms.map(fmt).join(' | ')} | ${fmt(ms[2]! / Math.max(ms[0]!, 1e-3))}× | ${fmt(baseline!)} | ${fmt(ms[2]! / Math.max(baseline!, 1e-3))}× |`);
  }
}
