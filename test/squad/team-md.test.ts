import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_ROSTER, parseTeamMd, stripMarkdown } from '../../src/squad/team-md.js';

describe('parseTeamMd', () => {
  it('reads the Members table by header name, ignoring the Coordinator table before it', () => {
    const md = [
      '# Crew',
      '',
      '## Coordinator',
      '| Name | Role | Notes |',
      '|------|------|-------|',
      '| Squad | Coordinator | Routes work |',
      '',
      '## Members',
      '| Status | Charter | Role | Name | Extra |',
      '|:---:|---|---|---|---|',
      '| Active | [charter](.squad/agents/ada/charter.md) | **Lead** | `Ada` | x |',
      '| 🟢 Active | — | Tester | [Bob](https://example.com) | y |',
    ].join('\n');
    const team = parseTeamMd(md);
    expect(team.name).toBe('Crew');
    expect(team.rosterForm).toBe('members-table');
    expect(team.members).toEqual([
      { name: 'Ada', role: 'Lead', status: 'Active', charter: '.squad/agents/ada/charter.md' },
      { name: 'Bob', role: 'Tester', status: '🟢 Active' },
    ]);
  });

  it('falls back to the first table with a Member column and skips Coding Agent and Field/Value tables', () => {
    const md = [
      '# T',
      '## Issue Source',
      '| Field | Value |',
      '|---|---|',
      '| **Repository** | a/b |',
      '## Coding Agent',
      '| Name | Role |',
      '|---|---|',
      '| @copilot | Coding Agent |',
      '## People',
      '| Member | Role |',
      '|---|---|',
      '| dev | Developer |',
    ].join('\n');
    const team = parseTeamMd(md);
    expect(team.rosterForm).toBe('table');
    expect(team.members).toEqual([{ name: 'dev', role: 'Developer' }]);
  });

  it('falls back to ### sections with a Role line', () => {
    const md = '# Crew\n\n### Ada\n- **Role:** Lead\n- **Status:** Active\n\n### Notes\nno role here\n\n### Bob\n- **Role:** Tester\n';
    const team = parseTeamMd(md);
    expect(team.rosterForm).toBe('sections');
    expect(team.members).toEqual([
      { name: 'Ada', role: 'Lead', status: 'Active' },
      { name: 'Bob', role: 'Tester' },
    ]);
  });

  it('gives an empty roster and a warning for an empty Members table', () => {
    const team = parseTeamMd('# Crew\n\n## Members\n\n| Name | Role |\n|---|---|\n\n## Other\n| Name | Role |\n|---|---|\n| X | Y |\n');
    expect(team.members).toEqual([]);
    expect(team.warnings.join()).toMatch(/no member rows/);
  });

  it('never turns a header or separator row into a member (a table with only a header)', () => {
    expect(parseTeamMd('## Members\n| Name | Role |\n').members).toEqual([]);
    expect(parseTeamMd('| Name | Role |\n| :---: | --- |\n| Name | Role |').members).toEqual([]);
  });

  it('defaults the name to Squad Team and the mode to orchestrator-reflect; reads a mode line', () => {
    expect(parseTeamMd('no heading').name).toBe('Squad Team');
    expect(parseTeamMd('# A').mode).toBe('orchestrator-reflect');
    expect(parseTeamMd('# A\nmode: sequential\n').mode).toBe('sequential');
    expect(parseTeamMd('# A\n- **Mode:** `broadcast`\n').mode).toBe('broadcast');
    const bad = parseTeamMd('# A\nmode: "background"\n');
    expect(bad.mode).toBe('orchestrator-reflect');
    expect(bad.warnings.join()).toMatch(/unknown mode "background"/);
  });

  it('ignores headings and tables inside code fences', () => {
    const team = parseTeamMd('```\n# Not me\n| Name | Role |\n|--|--|\n| Ghost | x |\n```\n# Real\n| Name | Role |\n|--|--|\n| Ada | Lead |');
    expect(team.name).toBe('Real');
    expect(team.members.map((m) => m.name)).toEqual(['Ada']);
  });

  it('strips markdown from cells and keeps escaped bars', () => {
    expect(stripMarkdown('**Lead** [docs](x) `code` <b>tag</b> ~~old~~')).toBe('Lead docs code tag old');
    expect(parseTeamMd('| Name | Role |\n|--|--|\n| A \\| B | R |').members[0]?.name).toBe('A | B');
  });

  it('reads hostile inputs without backtracking blow-ups (each would take minutes with unbounded patterns)', () => {
    const row = (cell: string) => `| Name | Charter |\n|--|--|\n| ${cell} | ${cell} |`;
    const hostile = [
      row('[a]('.repeat(30_000)),
      row(' _a'.repeat(30_000)),
      row('<a'.repeat(30_000)),
      row(' *a'.repeat(30_000)),
      `# a${' #'.repeat(30_000)} x`,
      `### a\n- **Role:** ${'**'.repeat(30_000)}`,
    ];
    for (const text of hostile) expect(parseTeamMd(text).name.length).toBeGreaterThan(0);
  });

  it('never throws on arbitrary text', () => {
    const line = fc.oneof(
      fc.string(),
      fc.constantFrom('## Members', '| Name | Role |', '|---|---|', '| x | y |', '### A', '- **Role:** r', '```', 'mode: x', '# T'),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), (lines) => {
        const team = parseTeamMd(lines.join('\n'));
        expect(typeof team.name).toBe('string');
        for (const m of team.members) expect(m.name).not.toBe('');
      }),
      { numRuns: 300 },
    );
  });

  it('reads at most MAX_ROSTER members and says so', () => {
    const rows = Array.from({ length: MAX_ROSTER + 5 }, (_, i) => `| m${i} | r |`).join('\n');
    const table = parseTeamMd(`## Members\n| Name | Role |\n|---|---|\n${rows}`);
    expect(table.members).toHaveLength(MAX_ROSTER);
    expect(table.members.at(-1)).toEqual({ name: `m${MAX_ROSTER - 1}`, role: 'r' });
    expect(table.warnings).toEqual([`team.md: the roster lists more than ${MAX_ROSTER} members; only the first ${MAX_ROSTER} are read`]);
    const sections = Array.from({ length: MAX_ROSTER + 1 }, (_, i) => `### m${i}\n- Role: r`).join('\n');
    expect(parseTeamMd(sections).members).toHaveLength(MAX_ROSTER);
    expect(parseTeamMd(sections).warnings).toHaveLength(1);
  });
});
