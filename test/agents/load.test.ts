import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAgentFolder, loadAgents } from '../../src/agents/load.js';
import { agentEdges, validateAgents } from '../../src/agents/validate.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'agents');
const dirs: string[] = [];
const tempDir = (files: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-agents-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('loadAgents', () => {
  it('reads the places coding tools keep agents in, inside hidden folders, and leaves other hidden folders out', async () => {
    const agent = (name: string) => `---\nname: ${name}\ndescription: ${name}\n---\nYou are ${name}.\n`;
    const dir = tempDir({
      '.claude/agents/reviewer.md': agent('reviewer'),
      '.claude/commands/deploy.md': agent('deploy'),
      '.github/agents/planner.agent.md': agent('planner'),
      '.github/chatmodes/tutor.chatmode.md': agent('tutor'),
      '.opencode/agent/writer.md': agent('writer'),
      '.vscode/notes.md': agent('notes'),
      '.git/description.md': agent('git'),
      'node_modules/pkg/readme.md': agent('pkg'),
      'agents/lead.md': agent('lead'),
    });
    const defs = await loadAgents(dir);
    expect(defs.map((d) => [d.name, d.format])).toEqual([
      ['reviewer', 'claude-code'],
      ['planner', 'copilot'],
      ['tutor', 'copilot'],
      ['writer', 'opencode'],
      ['lead', expect.any(String)],
    ]);
    // The example of a project whose agents live in .claude/agents reads from its root.
    expect((await loadAgents(join(import.meta.dirname, '..', '..', 'examples', 'claude-agents'))).map((d) => d.name)).toContain('lead');
  });

  it('loads the real ai-agent files; the sub-agents that were not copied are reported by name', async () => {
    const defs = await loadAgents(join(fixtures, 'code-review'));
    expect(defs.map((d) => d.name)).toEqual(['code-review-discovery', 'code-review-security', 'code-review']);
    expect(defs[2]).toMatchObject({ model: 'anthropic/claude-sonnet-4-5', tools: ['batch'], file: 'code-review.ai', format: 'ai-agent' });
    expect(defs[2]!.system).toMatch(/^You coordinate a multi-agent code review/);
    // The two sub-agents present resolve to their names; the five the fixture lacks stay paths.
    expect(defs[2]!.subAgents).toEqual([
      'code-review-discovery', 'code-review-tests.ai', 'code-review-architecture.ai', 'code-review-quality.ai',
      'code-review-complexity.ai', 'code-review-security', 'code-review-production.ai',
    ]);
    const { errors, warnings } = validateAgents(defs);
    expect(errors.map((e) => e.message)).toEqual(
      ['tests', 'architecture', 'quality', 'complexity', 'production'].map((n) => `Agent "code-review" names the agent file "code-review-${n}.ai" (subagent), which is not in the folder`),
    );
    expect(warnings.map((w) => w.path?.[0])).toContain('maxToolTurns');
  });

  it('reads a folder of ai-agent files as their author meant: empty keys, a doubled fence, references by path', async () => {
    const dir = join(fixtures, 'ai-agent-team');
    const defs = await loadAgents(dir);
    expect(defs.map((d) => d.name).sort()).toEqual(['blog', 'lead', 'newsletter', 'publish', 'researcher', 'style', 'writer']);
    const lead = defs.find((d) => d.name === 'lead')!;
    expect(lead).toMatchObject({ model: 'anthropic/claude-sonnet-4-5', subAgents: ['researcher', 'writer'], advisors: ['style'], handoff: 'publish', limits: { maxTurns: 8 }, temperature: 0.2 });
    expect(lead.system).toMatch(/^You lead a small newsroom\./);
    expect(defs.find((d) => d.name === 'publish')!.router).toEqual({ destinations: ['blog', 'newsletter'], fallback: 'blog' });
    expect(defs.find((d) => d.name === 'researcher')!.tools).toBeUndefined();
    const { errors, warnings } = validateAgents(defs);
    expect(errors).toEqual([]);
    expect(warnings.map((w) => `${w.file}: ${w.code}`)).toEqual([
      'lead.ai: doubled_fence',
      'lead.ai: unused_key',
      'researcher.ai: empty_key',
      'researcher.ai: unused_key',
    ]);
    expect(agentEdges(defs).map((e) => `${e.from} -${e.kind}-> ${e.to}`)).toEqual([
      'lead -advisor-> style',
      'lead -handoff-> publish',
      'lead -subagent-> researcher',
      'lead -subagent-> writer',
      'publish -router-> blog',
      'publish -router-> newsletter',
    ]);
  });

  it('resolves references in any case and by file name, as the tools match names', async () => {
    const dir = tempDir({
      'conductor.agent.md': '---\nagents: [Worker, helper.agent.md, other]\nhandoffs:\n  - { label: Next, agent: NEXT }\n---\nLead.',
      'worker.agent.md': '---\nname: worker\n---\nW',
      'helper.agent.md': '---\nname: Helper Bee\n---\nH',
      'next.agent.md': '---\n---\nN',
    });
    const defs = await loadAgents(dir);
    const conductor = defs.find((d) => d.name === 'conductor')!;
    expect(conductor.subAgents).toEqual(['worker', 'Helper Bee', 'other']);
    expect(conductor.handoffs).toEqual([{ label: 'Next', agent: 'next' }]);
    expect(validateAgents(defs).errors.map((e) => e.message)).toEqual(['Agent "conductor" names unknown agent "other" (subagent)']);
  });

  it('refuses a path reference that leaves the folder', async () => {
    const dir = tempDir({ 'team/a.ai': '---\nhandoff: ../../b.ai\n---\nA' });
    const defs = await loadAgents(join(dir, 'team'));
    expect(defs[0]!.handoff).toBe('../../b.ai');
    expect(validateAgents(defs).errors[0]).toMatchObject({ code: 'unknown_reference', message: expect.stringContaining('"../../b.ai"') });
  });

  it('follows symbolic links inside the repository only', async () => {
    const repo = tempDir({
      '.git/HEAD': 'ref: refs/heads/main\n',
      '.claude/agents/reviewer.md': '---\nname: reviewer\ntools: Read, Grep\n---\nReview.',
      '.claude/agents/README.md': '# Our agents\n\nSee the files.',
      'shared/tester.md': '---\nname: tester\ndescription: Tests: all of them\ntools: Read, Bash\n---\nTest.',
    });
    const outside = tempDir({ 'evil.md': '---\nname: evil\n---\nNo.' });
    mkdirSync(join(repo, '.opencode'));
    symlinkSync(join(repo, '.claude', 'agents'), join(repo, '.opencode', 'agents'), 'dir');
    symlinkSync(join(repo, 'shared', 'tester.md'), join(repo, '.claude', 'agents', 'tester.md'));
    symlinkSync(join(outside, 'evil.md'), join(repo, '.claude', 'agents', 'evil.md'));
    const { agents, warnings } = await loadAgentFolder(join(repo, '.opencode', 'agents'));
    expect(agents.map((d) => [d.name, d.format])).toEqual([
      ['reviewer', 'claude-code'],
      ['tester', 'claude-code'],
    ]);
    expect(agents[1]!.description).toBe('Tests: all of them');
    expect(warnings.map((w) => w.code).sort()).toEqual(['link_outside', 'not_an_agent']);
    // A folder that is itself a link out of its repository is refused.
    symlinkSync(outside, join(repo, 'elsewhere'), 'dir');
    await expect(loadAgents(join(repo, 'elsewhere'))).rejects.toMatchObject({ code: 'unsafe_path' });
  });

  it('walks folders recursively in a deterministic order', async () => {
    const dir = tempDir({ 'b.md': '---\n---\nB', 'a/z.md': '---\n---\nZ', 'a/y.ai': '#!/bin/x\n---\n---\nY', 'notes.txt': 'skip' });
    expect((await loadAgents(dir)).map((d) => d.name)).toEqual(['y', 'z', 'b']);
  });

  it('names every file that failed', async () => {
    const dir = tempDir({ 'ok.md': '---\n---\nfine', 'bad.md': '---\ntemperature: hot\n---\n', 'evil.md': '---js\n1\n---\n' });
    const error = (await loadAgents(dir).catch((e: unknown) => e)) as Error & { details: { files: string[] } };
    expect(error.message).toContain('bad.md: `temperature`');
    expect(error.message).toContain('evil.md: Front matter in "js" is not allowed');
    expect(error.details.files).toEqual(['bad.md', 'evil.md']);
  });

  it('refuses a file over 1 MB before reading it', async () => {
    const dir = tempDir({ 'big.md': `---\n---\n${'x'.repeat(1024 * 1024 + 1)}` });
    await expect(loadAgents(dir)).rejects.toMatchObject({ code: 'parse_error', message: expect.stringContaining('big.md: larger than 1 MB') });
  });

  it('reports a missing folder clearly', async () => {
    await expect(loadAgents(join(tmpdir(), 'no-such-troupe-dir'))).rejects.toThrow(/Cannot read the agent folder/);
  });
});
