// `troupe validate` shows the team, and the warnings a folder of vendor
// agent files gives are grouped into lines a person can act on:
// `--tool-map` maps (or leaves out quietly) the vendor's tool names, and
// `--quiet` mutes warnings. Checked on the real Copilot folder of the
// fixtures (test/fixtures/SOURCES.md): a conductor with sub-agents and
// hand-offs, 28 files naming Copilot's tools.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { loadAgentFolder } from '../../src/agents/load.js';
import { inspectAgents } from '../../src/agents/inspect.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures');
const copilot = join(fixtures, 'agents', 'copilot');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function troupe(args: string[], signal?: AbortController): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, {
    out: (t) => {
      out.push(t);
      // A server is stopped once it says where it serves.
      if (signal && (t.startsWith('A2A agent') || t.startsWith('troupe dev: http'))) signal.abort();
    },
    err: (t) => err.push(t),
    env: {},
    ...(signal ? { signal: signal.signal } : {}),
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** A tool map file. */
function toolMap(map: Record<string, string | null>): string {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-tool-map-'));
  dirs.push(dir);
  const file = join(dir, 'tools.json');
  writeFileSync(file, JSON.stringify(map));
  return file;
}

/** Every tool name the Copilot folder's files give that resolves to nothing. */
async function copilotToolNames(): Promise<string[]> {
  const rows = inspectAgents((await loadAgentFolder(copilot)).agents, { unknownTools: 'warn' });
  return [...new Set(rows.flatMap((r) => r.tools.unresolved))];
}

const longest = (text: string) => Math.max(...text.split('\n').map((l) => l.length));
const warnings = (text: string) => text.split('\n').filter((l) => l.startsWith('warning'));

describe('troupe validate <folder>', () => {
  it('prints the team (entry agents, their sub-agents, hand-offs) and one short line per vendor for the tools that resolve to nothing', async () => {
    const { code, stdout, stderr } = await troupe(['validate', copilot]);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(longest(stdout)).toBeLessThanOrEqual(160);
    expect(stdout).toMatchInlineSnapshot(`
      "team: 2 entry agents; under each, what it calls (indented); → its hand-offs
        devsquad  (entry)
          devsquad.init
          devsquad.envision  → devsquad.kickoff
          devsquad.kickoff  → devsquad.specify, devsquad.plan
          devsquad.specify  → devsquad.plan
          devsquad.plan  → devsquad.decompose
            devsquad.security  → devsquad.implement
            devsquad.plan.context
            devsquad.plan.architecture
            devsquad.plan.design
          devsquad.decompose  → devsquad.implement
          devsquad.implement  → devsquad.review, devsquad.refine
            devsquad.review  → devsquad.implement, devsquad.specify, devsquad.plan
              devsquad.review.spec
              devsquad.review.adr
              devsquad.review.code
              devsquad.review.security
              devsquad.review.tests
            devsquad.refine  → devsquad.specify, devsquad.plan, devsquad.decompose, devsquad.kickoff
              devsquad.refine.artifacts
              devsquad.refine.health
            devsquad.implement.validate
            devsquad.implement.execute
            devsquad.implement.verify
            devsquad.implement.finalize
          devsquad.security  (above)
          devsquad.review  (above)
          devsquad.refine  (above)
          devsquad.sprint  → devsquad.plan, devsquad.decompose, devsquad.specify
          devsquad.extend
        devsquad.triage  (entry)

      warning  Copilot tools with no troupe tool, left out: read/readFile, search/listDirectory, search/textSearch and 71 more (74 names in 28 agents)
               map them with --tool-map <file.json> ({ "<name>": "<troupe tool>" or null }); troupe agents inspect lists each agent's
      28 agents (2 entry), 0 errors, 1 warning"
    `);
  });

  it('--tool-map maps vendor names: to null, left out without a warning; to a tool troupe does not have, a clear error', async () => {
    const quiet = toolMap(Object.fromEntries((await copilotToolNames()).map((n) => [n, null])));
    const mapped = await troupe(['validate', copilot, '--tool-map', quiet]);
    expect(mapped.code).toBe(0);
    expect(warnings(mapped.stdout)).toEqual([]);
    expect(mapped.stdout.split('\n').at(-1)).toBe('28 agents (2 entry), 0 errors, 0 warnings');

    const two = toolMap({ 'read/readFile': null, 'search/listDirectory': null });
    const some = await troupe(['validate', copilot, '--tool-map', two]);
    expect(some.stdout).toContain('warning  Copilot tools with no troupe tool, left out: search/textSearch, search/fileSearch, search/codebase and ');
    expect((await troupe(['agents', 'inspect', copilot, '--tool-map', two])).stdout).toMatch(/^devsquad\.plan\.context\.agent\.md .* 4: 2 not, 2 mapped to none /m);

    const unknown = await troupe(['validate', copilot, '--tool-map', toolMap({ 'read/readFile': 'read_file' })]);
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toBe('invalid_option: --tool-map maps "read/readFile" to "read_file", which troupe validate does not have (it has no tools of its own); map a name to null to leave it out without a warning');
    const broken = toolMap({});
    writeFileSync(broken, '["read"]');
    expect((await troupe(['validate', copilot, '--tool-map', broken])).stderr).toBe(`invalid_option: The tool map ${broken} must be a JSON object of tool names to troupe tool names (or null)`);
  });

  it('--quiet mutes warnings; errors still print', async () => {
    const quiet = await troupe(['validate', copilot, '--quiet']);
    expect(quiet.code).toBe(0);
    expect(warnings(quiet.stdout)).toEqual([]);
    expect(quiet.stdout.split('\n').at(-1)).toBe('28 agents (2 entry), 0 errors, 1 warning (--quiet)');
    const cycle = await troupe(['validate', join(fixtures, 'cli', 'cycle'), '--quiet']);
    expect(cycle.code).toBe(1);
    expect(cycle.stderr).toContain('Cycle: a -> b -> a');
  });
});

describe('troupe run and serve on vendor agent files', () => {
  const script = join(fixtures, 'cli', 'devsquad-script.json');

  it('run: the tools that resolve to nothing are one short warning before progress, for the agents the run uses; --tool-map and --quiet mute it', async () => {
    const ran = await troupe(['run', copilot, '--agent', 'devsquad.plan', 'Plan feature 042', '--script', script]);
    expect(ran.code).toBe(0);
    // devsquad.plan reaches 22 of the 28 agents (its sub-agents, its hand-offs and theirs).
    expect(warnings(ran.stderr)).toEqual([expect.stringMatching(/^warning {2}Copilot tools with no troupe tool, left out: read\/readFile, search\/listDirectory, .* and \d+ more \(\d+ names in 22 agents\)$/)]);
    expect(ran.stderr.indexOf('warning')).toBeLessThan(ran.stderr.indexOf('devsquad.plan'));
    expect(longest(ran.stderr)).toBeLessThanOrEqual(160);
    const quiet = toolMap(Object.fromEntries((await copilotToolNames()).map((n) => [n, null])));
    expect((await troupe(['run', copilot, '--agent', 'devsquad.plan', 'Plan feature 042', '--script', script, '--tool-map', quiet])).stderr).not.toMatch(/^warning/m);
    expect((await troupe(['run', copilot, '--agent', 'devsquad.plan', 'Plan feature 042', '--script', script, '--quiet'])).stderr).not.toMatch(/^warning/m);
  });

  it('serve --a2a: --tool-map resolves a vendor name to a tool troupe serve has (ask_person)', async () => {
    const map = toolMap({ 'vscode/askQuestions': 'ask_person' });
    const served = await troupe(['serve', '--a2a', copilot, '--port', '0', '--agent', 'devsquad', '--tool-map', map], new AbortController());
    expect(served.code).toBe(0);
    const names = (stderr: string) => Number(/^warning {2}Copilot tools with no troupe tool, left out: read\/readFile, .* \((\d+) names in 27 agents\)$/m.exec(stderr)?.[1]);
    const without = await troupe(['serve', '--a2a', copilot, '--port', '0', '--agent', 'devsquad'], new AbortController());
    expect(names(without.stderr)).toBe((await copilotToolNames()).length);
    // One name fewer: Copilot's question tool is troupe's ask_person.
    expect(names(served.stderr)).toBe(names(without.stderr) - 1);
    const wrong = await troupe(['serve', '--a2a', copilot, '--port', '0', '--tool-map', toolMap({ 'vscode/askQuestions': 'ask' })]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('invalid_option: --tool-map maps "vscode/askQuestions" to "ask", which troupe serve does not have (its tools: ask_person)');
  });

  it('dev: the same grouped warning when it starts; --tool-map applies, and names only null (troupe dev has no tools)', async () => {
    const started = await troupe(['dev', copilot, '--port', '0'], new AbortController());
    expect(started.code).toBe(0);
    expect(warnings(started.stderr)).toEqual([expect.stringMatching(/^warning {2}Copilot tools with no troupe tool, left out: read\/readFile, .* \(74 names in 28 agents\)$/)]);
    const quiet = toolMap(Object.fromEntries((await copilotToolNames()).map((n) => [n, null])));
    expect(warnings((await troupe(['dev', copilot, '--port', '0', '--tool-map', quiet], new AbortController())).stderr)).toEqual([]);
    const wrong = await troupe(['dev', copilot, '--port', '0', '--tool-map', toolMap({ 'read/readFile': 'read_file' })]);
    expect(wrong).toMatchObject({ code: 1, stderr: 'invalid_option: --tool-map maps "read/readFile" to "read_file", which troupe dev does not have (it has no tools of its own); map a name to null to leave it out without a warning' });
  });
});
