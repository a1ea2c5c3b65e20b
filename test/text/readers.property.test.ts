import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRecording } from '../../src/adapters/recording.js';
import { parseRunLogFile } from '../../src/cli/main.js';
import { readFrontMatterData, readFrontMatterLeniently, splitFrontMatter } from '../../src/agents/front-matter.js';
import { parseAgentFile, safeParseAgentFile } from '../../src/agents/parse.js';
import { readTaskList } from '../../src/coordination/lead-prompts.js';
import { parseLeadActions, parseQuestion } from '../../src/coordination/tools.js';
import { TroupeError } from '../../src/core/errors.js';
import { parseHandoffLine } from '../../src/patterns/handoff-choices.js';
import { parseRouteLine } from '../../src/patterns/router.js';
import { parseTeamReply } from '../../src/patterns/team-protocol.js';
import { parseAssignments, requireAssignments, safeParseAssignments } from '../../src/reflection/assignments.js';
import { normaliseScore, parseEvaluation, parseScore, parseVerdict, safeParseScore } from '../../src/reflection/evaluation.js';
import { parseSentinels, scanMarkerLines, stripSentinels } from '../../src/reflection/sentinels.js';
import { jaccard, StallDetector, tokenSet } from '../../src/reflection/stall.js';
import { extractJson, validatePlanJson } from '../../src/plan/model/plan.js';
import { capAtLine, capEntries, splitEntries } from '../../src/squad/caps.js';
import { parseTeamMd } from '../../src/squad/team-md.js';
import { roleFromPrompt } from '../../src/squad/write.js';
import { squadSlug } from '../../src/squad/slug.js';
import { fencedBlocks, scanLines } from '../../src/text/fences.js';
import { findJson, safeFindJson } from '../../src/text/json.js';
import { normalizeText } from '../../src/text/lines.js';
import { NameMatcher, nameKey } from '../../src/text/names.js';

// Every public reader of model output or files, as a function of one text.
const collect = (text: string) => {
  const lines: unknown[] = [];
  scanLines(text, (l) => lines.push([l.kind, l.text, l.start, l.end]));
  return lines;
};
const readers: Record<string, (text: string) => unknown> = {
  normalizeText,
  scanLines: collect,
  fencedBlocks,
  parseSentinels,
  stripSentinels,
  scanMarkerLines: (t) => {
    const seen: unknown[] = [];
    scanMarkerLines(t, (x) => (x === 'X' ? 'x' : undefined), (line, marker) => seen.push([line, marker]));
    return seen;
  },
  parseAssignments: (t) => parseAssignments(t, ['a', 'b', 'Code Reviewer']),
  safeParseAssignments: (t) => safeParseAssignments(t, ['a']),
  requireAssignments: (t) => requireAssignments(t, ['a']),
  parseEvaluation,
  parseScore,
  safeParseScore,
  parseVerdict,
  normaliseScore,
  tokenSet: (t) => [...tokenSet(t)].sort(),
  jaccard: (t) => jaccard(t, 'a b c'),
  'StallDetector.check': (t) => {
    const stall = new StallDetector();
    stall.check(t);
    return stall.check(t);
  },
  parseTeamReply,
  parseAgentFile: (t) => parseAgentFile(t, { name: 'agent' }),
  safeParseAgentFile: (t) => safeParseAgentFile(t, { name: 'agent' }),
  splitFrontMatter: (t) => splitFrontMatter(t),
  readFrontMatterData: (t) => {
    const split = splitFrontMatter(t);
    return split.success ? readFrontMatterData(split.data) : split;
  },
  readFrontMatterLeniently: (t) => {
    const split = splitFrontMatter(t);
    return split.success ? readFrontMatterLeniently(split.data) : split;
  },
  'safeParseAgentFile (Claude Code)': (t) => safeParseAgentFile(t, { name: 'agent', format: 'claude-code' }),
  'safeParseAgentFile (Copilot)': (t) => safeParseAgentFile(t, { file: 'agent.agent.md' }),
  'safeParseAgentFile (OpenCode)': (t) => safeParseAgentFile(t, { file: '.opencode/agents/agent.md' }),
  'safeParseAgentFile (ai-agent)': (t) => safeParseAgentFile(t, { file: 'agent.ai' }),
  parseHandoffLine,
  parseTeamMd,
  splitEntries,
  capEntries: (t) => capEntries(t, 60),
  capAtLine: (t) => capAtLine(t, 40),
  roleFromPrompt,
  squadSlug,
  nameKey,
  'NameMatcher.matchAt': (t) => new NameMatcher(['a', 'a b', 'Code Reviewer']).matchAt(t, 0)?.name ?? null,
  extractJson: (t) => [extractJson(t), extractJson(t, 'array')],
  safeFindJson: (t) => safeFindJson(t, { kind: 'any' }),
  findJson: (t) => findJson(t),
  validatePlanJson,
  readTaskList,
  parseLeadActions,
  parseQuestion,
  parseRouteLine,
  parseRecording,
  parseRunLogFile: (t) => parseRunLogFile(t, 'run.jsonl'),
};

/** What a reader gives: its value, or the code and message of the TroupeError it threw (anything else fails the test). */
function outcome(read: (text: string) => unknown, text: string): unknown {
  try {
    return { value: read(text) };
  } catch (error) {
    if (error instanceof TroupeError) return { error: error.code, message: error.message };
    throw error;
  }
}

// Lines that exercise every protocol, none of them a fence line.
const protocolLine = fc.constantFrom(
  '[[REFLECTION_COMPLETE]]',
  '  [[group_reflect_complete]] ',
  '[[NEEDS_ITERATION]]',
  'All done. [[GROUP_REFLECT_COMPLETE]]',
  'Not yet [[needs_iteration]] [[REFLECTION_COMPLETE]]',
  '> quoted [[GROUP_REFLECT_COMPLETE]]',
  '[[VOTE_CONCLUDE]]',
  '[[TEAM_CONCLUDE]]',
  'CANCEL t1: obsolete',
  'SPAWN worker-9',
  'APPROVE t2',
  'REJECT t3: not yet',
  'ANSWER a: use Postgres',
  'ADD_TASK: {"title": "x"}',
  'REASSIGN t1 b',
  'QUESTION: which database?',
  'ROUTE: billing',
  'route: `legal`',
  'HANDOFF: Create Tasks',
  'description: Lead: plans the work',
  'tools: Read, Grep',
  'tools:',
  '#  - web-research',
  '@worker:a fix it',
  '@worker:b',
  '@end',
  '@Worker:Code Reviewer check it',
  '@END',
  '# Title',
  '## Decision',
  '### Ada',
  '- **Role:** Lead',
  'mode: broadcast',
  '| Name | Role |',
  '|---|---|',
  '| Ada | Lead |',
  '---',
  '> a quote',
  'SCORE: 7/10',
  'RATIONALE: fine',
  'SCORE: 0.9.1',
  'RATIONALE: complete [[GROUP_REFLECT_COMPLETE]]',
  'PASS',
  'model: gpt-4o',
  '{"a": 1}',
  '[1, 2]',
  '{"planSummary": "s", "chunks": [{"sequenceIndex": 0, "title": "t", "prompt": "do the whole thing", "complexity": "Low", "role": "Generic"}]}',
  '[{"worker": "a", "task": "x"}]',
  '[{"title": "t1"}]',
  '{"v": 1, "agent": "a", "session": 1, "turn": 1}',
  '{"type": "run.started", "runId": "r1", "time": 1}',
  '',
);
const wordLine = fc.string({ unit: fc.constantFrom('a', 'b', ' ', 'x', ':', '.', '-', '*', '_', '>', '#', '|', '{', '}', '"', "'", ',', '@'), maxLength: 24 }).filter((l) => !/^\s*(```|~~~)/.test(l));
const line = fc.oneof({ weight: 3, arbitrary: protocolLine }, { weight: 1, arbitrary: wordLine });
const fenceLine = fc.tuple(fc.constantFrom('', ' ', '   ', '      '), fc.constantFrom('`', '~'), fc.integer({ min: 3, max: 6 }), fc.constantFrom('', 'ts', 'json', 'markdown', 'text title="x"')).map(([indent, mark, n, info]) => `${indent}${mark.repeat(n)}${info}`);
/** Texts: lines (fences among them), joined with `\n`. */
const text = fc.array(fc.oneof({ weight: 6, arbitrary: line }, { weight: 1, arbitrary: fenceLine }), { maxLength: 14 }).map((ls) => ls.join('\n'));
/** Any string at all, and texts with structure. */
const anyText = fc.oneof(text, fc.string({ unit: 'grapheme', maxLength: 60 }), fc.string({ unit: fc.constantFrom('\r', '\n', '`', '~', '{', '[', ']', '}', '"', '-', ' ', 'a', '\uFEFF', '\u2028'), maxLength: 60 }));

const RUNS = { numRuns: 150 };

describe('every reader', () => {
  it('gives a result or a TroupeError for any string, never another throw', () => {
    for (const [name, read] of Object.entries(readers)) {
      fc.assert(
        fc.property(anyText, (t) => {
          outcome(read, t);
        }),
        { ...RUNS, examples: [[''], ['\r\n'], ['\uFEFF'], ['```'], ['---'], ['{'], ['['], ['\u2028']] },
      );
      expect(name).toBeTruthy();
    }
  });

  it('throws invalid_argument for a value that is not a string', () => {
    const notText = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer(), fc.boolean(), fc.object(), fc.array(fc.string()), fc.constant(Buffer.from('x')));
    for (const [name, read] of Object.entries(readers)) {
      fc.assert(
        fc.property(notText, (value) => {
          expect(outcome(read, value as never), name).toMatchObject({ error: 'invalid_argument' });
        }),
        { numRuns: 20 },
      );
    }
  });

  it('reads LF, CRLF, a lone CR and a BOM the same', () => {
    for (const [name, read] of Object.entries(readers)) {
      fc.assert(
        fc.property(text, (t) => {
          const lf = outcome(read, t);
          expect(outcome(read, t.replace(/\n/g, '\r\n')), `${name} CRLF`).toEqual(lf);
          expect(outcome(read, t.replace(/\n/g, '\r')), `${name} CR`).toEqual(lf);
          expect(outcome(read, `\uFEFF${t}`), `${name} BOM`).toEqual(lf);
        }),
        RUNS,
      );
    }
  });
});

// Wrapping lines in a fence of any length (closed by a longer or equal fence, or never closed) must
// read as if those lines were one line of plain prose: quoted content never decides anything.
// Prose around the fence has no stray brackets, so that no JSON value could span the fence.
const prose = fc.oneof({ weight: 3, arbitrary: protocolLine }, { weight: 1, arbitrary: wordLine.filter((l) => !/[[\]{}]/.test(l)) });
const quotedLine = fc.oneof(protocolLine, wordLine);
const wrapped = fc
  .record({
    before: fc.array(prose, { maxLength: 6 }),
    quoted: fc.array(quotedLine, { minLength: 1, maxLength: 6 }),
    after: fc.array(prose, { maxLength: 6 }),
    mark: fc.constantFrom('`', '~'),
    open: fc.integer({ min: 3, max: 7 }),
    longer: fc.integer({ min: 0, max: 3 }),
    indent: fc.constantFrom('', '  ', '    '),
    info: fc.constantFrom('', 'json', 'ts', 'markdown', 'text'),
    closed: fc.boolean(),
  })
  .map(({ before, quoted, after, mark, open, longer, indent, info, closed }) => {
    const fence = [`${indent}${mark.repeat(open)}${info}`, 'For example:', ...quoted];
    if (closed) fence.push(`${indent}${mark.repeat(open + longer)}`);
    return {
      text: [...before, ...fence, ...after].join('\n'),
      // Unclosed, the fence runs to the end: what follows it is quoted too.
      plain: [...before, 'quoted prose', ...(closed ? after : [])].join('\n'),
    };
  });

const decisions: Record<string, (text: string) => unknown> = {
  parseSentinels,
  parseTeamReply: (t) => {
    const { vote, conclude } = parseTeamReply(t);
    return { vote, conclude };
  },
  parseLeadActions: (t) => parseLeadActions(t).actions,
  parseHandoffLine: (t) => parseHandoffLine(t)?.choice,
  parseQuestion,
  parseRouteLine: (t) => parseRouteLine(t)?.raw,
  parseAssignments: (t) => {
    const { assignments, unmatched } = parseAssignments(t, ['a', 'b', 'Code Reviewer']);
    return { workers: assignments.map((a) => a.worker), unmatched };
  },
  extractJson: (t) => [extractJson(t), extractJson(t, 'array')],
  validatePlanJson: (t) => validatePlanJson(t).plan,
  readTaskList: (t) => readTaskList(t).tasks,
  parseTeamMd: (t) => {
    const { name, mode, members, rosterForm } = parseTeamMd(t);
    return { name, mode, members, rosterForm };
  },
  splitEntries: (t) => splitEntries(t).entries.map((e) => e.split('\n')[0]),
};

describe('a fence of any length', () => {
  it('never turns quoted content into a sentinel, action, assignment, route, question, roster entry or JSON', () => {
    for (const [name, read] of Object.entries(decisions)) {
      fc.assert(
        fc.property(wrapped, ({ text: t, plain }) => {
          expect(read(t), name).toEqual(read(plain));
        }),
        { numRuns: 300 },
      );
    }
  });
});
