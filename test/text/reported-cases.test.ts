import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRecording } from '../../src/adapters/recording.js';
import { parseAgentFile, safeParseAgentFile } from '../../src/agents/parse.js';
import { validateAgents } from '../../src/agents/validate.js';
import { parseLeadActions, parseQuestion } from '../../src/coordination/tools.js';
import { isTroupeError } from '../../src/core/errors.js';
import { parseTeamReply } from '../../src/patterns/team-protocol.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { runEventsStream, timeline } from '../../src/persistence/run-log.js';
import { jaccard, StallDetector } from '../../src/reflection/stall.js';
import { parseSentinels } from '../../src/reflection/sentinels.js';
import { extractJson, validatePlanJson } from '../../src/plan/model/plan.js';
import { capEntries, splitEntries } from '../../src/squad/caps.js';
import { discoverSquad } from '../../src/squad/parse.js';
import { DEFAULT_TEAM_MODE } from '../../src/squad/preset.js';
import { parseTeamMd } from '../../src/squad/team-md.js';
import { tempDirs } from '../helpers/temp-dirs.js';

// Texts as real models and real editors produce them. Each case here failed before the readers were
// reworked (timing lives in bench/parsers.bench.ts; here the pathological inputs only have to finish,
// within the test time-out, with the right answer).

const crlf = (text: string) => text.replace(/\n/g, '\r\n');

describe('Windows line endings', () => {
  it('an agent file saved with CRLF has clean values, and a last-key handoff validates', () => {
    const writer = parseAgentFile(crlf('---\nmodel: gpt-4o\nhandoff: reviewer\n---\nYou draft replies.\n'), { name: 'writer' });
    const reviewer = parseAgentFile(crlf('---\nmodel: gpt-4o\n---\nYou review.\n'), { name: 'reviewer' });
    expect(writer.model).toBe('gpt-4o');
    expect(writer.handoff).toBe('reviewer');
    expect(writer.system).toBe('You draft replies.');
    expect(validateAgents([writer, reviewer]).errors).toEqual([]);
  });

  it('parseTeamMd on CRLF text keeps the title and the Members table', () => {
    const md = crlf('# Review Crew\n\n## Members\n| Name | Role |\n|---|---|\n| Ada | Lead |\n| Bob | Tester |\n');
    const team = parseTeamMd(md);
    expect(team.name).toBe('Review Crew');
    expect(team.rosterForm).toBe('members-table');
    expect(team.members).toEqual([
      { name: 'Ada', role: 'Lead' },
      { name: 'Bob', role: 'Tester' },
    ]);
  });

  it('lead actions on CRLF lines are read', () => {
    expect(parseLeadActions('CANCEL t1: obsolete\r\nSPAWN worker-2\r\n').actions).toEqual([
      { type: 'cancel', taskId: 't1', reason: 'obsolete' },
      { type: 'spawn', worker: 'worker-2' },
    ]);
  });
});

describe('code fences of other lengths', () => {
  it('a four-backtick fence quoting a three-backtick one does not hide the sentinel after it', () => {
    const reply = ['Here is the template:', '````markdown', '```ts', 'const x = 1;', '```', '[[REFLECTION_COMPLETE]]', '````', 'All done.', '[[REFLECTION_COMPLETE]]'].join('\n');
    expect(parseSentinels(reply).reflectionComplete).toBe(true);
    // ... and the sentinel quoted inside the four-backtick fence alone does not count.
    expect(parseSentinels(reply.split('\n').slice(0, 8).join('\n')).reflectionComplete).toBe(false);
  });

  it('a tilde fence closes only on tildes at least as long', () => {
    const reply = '~~~~\n```\n~~~\n[[REFLECTION_COMPLETE]]\n~~~~\n[[NEEDS_ITERATION]]';
    expect(parseSentinels(reply)).toEqual({ reflectionComplete: false, groupComplete: false, needsIteration: true });
  });
});

describe('actions inside quoted examples', () => {
  it('CANCEL and SPAWN in a fenced example are not executed; the real action after it is', () => {
    const reply = ['The format is:', '```', 'CANCEL t1: obsolete', 'SPAWN worker-9', '```', 'APPROVE t2'].join('\n');
    expect(parseLeadActions(reply).actions).toEqual([{ type: 'review', taskId: 't2', approved: true }]);
  });

  it('a QUESTION line in a fenced example is not a question', () => {
    expect(parseQuestion('Ask like this:\n```\nQUESTION: which database?\n```\nNo question from me.')).toBeUndefined();
    expect(parseQuestion('```\nQUESTION: quoted\n```\nQUESTION: real one?')).toBe('real one?');
  });
});

describe('the right JSON candidate, not the first', () => {
  const plan = '{"planSummary": "s", "chunks": [{"sequenceIndex": 0, "title": "t", "prompt": "do the whole thing", "complexity": "Low", "role": "Generic"}]}';

  it('skips a placeholder in braces before the plan', () => {
    expect(extractJson(`Use {name} as the placeholder. Here is the plan: ${plan}`)).toBe(plan);
    expect(validatePlanJson(`Use {name} as the placeholder. Here is the plan: ${plan}`).valid).toBe(true);
  });

  it('prefers a ```json block to a ```ts block before it', () => {
    const text = `\`\`\`ts\nconst config = { "plan": false };\n\`\`\`\n\n\`\`\`ts\n{ "ts": true }\n\`\`\`\n\n\`\`\`json\n${plan}\n\`\`\``;
    expect(extractJson(text)).toBe(plan);
  });

  it('skips a bracketed name before the array', () => {
    expect(extractJson('[worker A] will start. Tasks: [{"title": "a"}, {"title": "b"}]', 'array')).toBe('[{"title": "a"}, {"title": "b"}]');
  });

  it('returns the first candidate that passes the plan schema, not merely the first that parses', () => {
    const text = `Example: {"planSummary": "not a plan"}\n\nThe plan:\n${plan}`;
    const checked = validatePlanJson(text);
    expect(checked.valid).toBe(true);
    expect(checked.plan?.planSummary).toBe('s');
  });

  it('repairs trailing commas, single quotes and a cut-off end, and says so', () => {
    const damaged = plan.replace('"Generic"}]}', "'Generic',},]}");
    const checked = validatePlanJson(`\`\`\`json\n${damaged}\n\`\`\``);
    expect(checked.valid).toBe(true);
    expect(checked.repaired).toBe(true);
    const cut = validatePlanJson(plan.slice(0, -3));
    expect(cut.plan?.chunks).toHaveLength(1);
    expect(cut.repaired).toBe(true);
  });
});

describe('pathological inputs finish with the right answer', () => {
  it('an opening fence followed by white space and no closing fence (plan JSON)', () => {
    expect(extractJson(`\`\`\`${' \n'.repeat(128 * 1024)}`)).toBeUndefined();
    expect(validatePlanJson(`\`\`\`json${' '.repeat(256 * 1024)}`).errors).toEqual(['no JSON object found in the answer']);
  });

  it('team.md mode, heading and role lines that backtracked', () => {
    const long = ' '.repeat(160 * 1024);
    expect(parseTeamMd(`# T\nmode:${long}!\n`).mode).toBe(DEFAULT_TEAM_MODE);
    expect(parseTeamMd(`#${long}\u2028\n`).name).toBe('Squad Team');
    expect(parseTeamMd(`# T\n### Ada\n- role:${long}\u2028x\n`).members).toEqual([{ name: 'Ada', role: 'x' }]);
  });

  const dirs = tempDirs('troupe-readers-');
  it('a heading with U+2028 through discoverSquad', async () => {
    const root = dirs();
    mkdirSync(join(root, '.squad'));
    writeFileSync(join(root, '.squad', 'team.md'), `#${' '.repeat(200 * 1024)}\u2028\n\n## Members\n| Name | Role |\n|---|---|\n| Ada | Lead |\n`);
    const squad = await discoverSquad(root);
    expect(squad?.roster.map((m) => m.name)).toEqual(['Ada']);
  });

  it('parseQuestion on 300,000 newlines', () => {
    expect(parseQuestion('\n'.repeat(300_000))).toBeUndefined();
    expect(parseQuestion(`${'\n'.repeat(300_000)}QUESTION: still there?`)).toBe('still there?');
  });

  it('agent files whose front matter is blank lines: read when small, refused past the bound', () => {
    const small = safeParseAgentFile(`---\n${'\n'.repeat(40 * 1024)}model: m\n---\nBody.`, { name: 'a' });
    expect(small.success && small.data.model).toBe('m');
    const large = safeParseAgentFile(`---\n${'\n'.repeat(116 * 1024)}---\nBody.`, { name: 'a' });
    expect(large.success).toBe(false);
    expect(!large.success && large.issues[0]?.code).toBe('front_matter_too_large');
  });

  // Linear before too, but slow per megabyte: bench/parsers.bench.ts measures it; this checks the answer.
  it('StallDetector and jaccard on a megabyte of distinct tokens', () => {
    const text = Array.from({ length: 150_000 }, (_, i) => `t${i}`).join(' ');
    expect(jaccard(text, `${text} x`)).toBeCloseTo(150_000 / 150_001);
    const stall = new StallDetector();
    stall.check(text);
    expect(stall.check(text).repeated).toBe(true);
  });
});

describe('a non-string is a typed error', () => {
  const values: unknown[] = [undefined, null, 42, {}, ['text'], Buffer.from('x')];
  const parsers: Record<string, (value: never) => unknown> = {
    validatePlanJson,
    extractJson,
    parseTeamMd,
    parseTeamReply,
    parseLeadActions,
    parseRecording,
    splitEntries,
    capEntries: (value) => capEntries(value, 100),
  };
  for (const [name, parse] of Object.entries(parsers)) {
    it(name, () => {
      for (const value of values) {
        let thrown: unknown;
        try {
          parse(value as never);
        } catch (error) {
          thrown = error;
        }
        expect(isTroupeError(thrown, 'invalid_argument'), `${name}(${String(value)})`).toBe(true);
      }
    });
  }
});

describe('timeline over a log with records that are not events', () => {
  it('skips them and reports them', async () => {
    const store = memoryStore();
    const stream = runEventsStream('r1');
    await store.append(stream, { type: 'run.started', runId: 'r1', time: 10, runnable: 'x', input: 'hi' });
    for (const junk of [null, 7, 'text', [1], { type: 3, time: 1 }, { type: 'op.started', time: 1 }, { type: 'op.started', runId: 'r1' }]) await store.append(stream, junk);
    await store.append(stream, { type: 'run.completed', runId: 'r1', time: 25, status: 'completed', output: 'ok' });
    const skipped: unknown[] = [];
    const entries = await timeline('r1', { store, onSkipped: (s) => skipped.push(...s) });
    expect(entries.map((e) => [e.index, e.type, e.durationMs])).toEqual([
      [0, 'run.started', undefined],
      [8, 'run.completed', 15],
    ]);
    expect(skipped).toEqual([
      { index: 1, reason: 'not an object (null)' },
      { index: 2, reason: 'not an object (number)' },
      { index: 3, reason: 'not an object (string)' },
      { index: 4, reason: 'not an object (array)' },
      { index: 5, reason: 'no event `type`' },
      { index: 6, reason: 'no `runId`' },
      { index: 7, reason: 'no numeric `time`' },
    ]);
  });
});
