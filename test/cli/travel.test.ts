import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { fileStore } from '../../src/persistence/file-store.js';
import { readRun } from '../../src/persistence/run-log.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'travel');
const agents = join(fixtures, 'review');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function troupe(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t), env: {} });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** A file store with one logged review run. */
async function recorded(): Promise<string> {
  const store = mkdtempSync(join(tmpdir(), 'troupe-travel-'));
  dirs.push(store);
  const ran = await troupe('run', agents, 'review', 'Review PR 7', '--script', join(fixtures, 'review-script.json'), '--store', store, '--quiet');
  expect(ran.code).toBe(0);
  return store;
}

describe('troupe runs, fork and replay', () => {
  it('runs: lists the runs of a store with status, duration and usage, and one run\'s checkpoints', async () => {
    const store = await recorded();
    const listed = await troupe('runs', '--store', store);
    expect(listed.code).toBe(0);
    const [header, row] = listed.stdout.split('\n');
    expect(header).toMatch(/^run\s+runnable\s+status\s+duration\s+tokens in\/out\s+cost\s+forked from$/);
    expect(row).toMatch(/^[0-9a-f-]{36}\s+review \+ advisors\s+completed\s+\d+ ms\s+\d+\/\d+\s+\$0\.0000$/);
    const json = await troupe('runs', '--store', store, '--json');
    const meta = JSON.parse(json.stdout) as { runId: string; usage: { turns: number } };
    expect(meta.usage.turns).toBe(3);
    const none = await troupe('runs', meta.runId, '--store', store);
    expect(none.stdout).toBe(`Run "${meta.runId}" saved no checkpoints.`);
    expect((await troupe('runs', 'missing', '--store', store)).stderr).toBe('unknown_run: No run "missing" is logged in the store');
    expect((await troupe('runs')).code).toBe(2);
    expect((await troupe('runs', '--nope', '--store', store)).stderr).toContain("Unknown option '--nope'");
  });

  it('replay: no model call; --what-if: only the changed agent and its dependents, and exit 1 when the answer regressed', async () => {
    const store = await recorded();
    const runId = (JSON.parse((await troupe('runs', '--store', store, '--json')).stdout) as { runId: string }).runId;
    const replayed = await troupe('replay', runId, '--store', store, '--agents', agents, '--script', join(fixtures, 'review-strict-script.json'));
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toContain(`${runId}: completed, 3 turns from the log, 0 model calls\nApprove as is.`);

    // The whole store as a regression suite: the strict prompt changes the style review and the verdict, nothing else.
    const whatIf = await troupe('replay', store, '--agents', agents, '--script', join(fixtures, 'review-strict-script.json'), '--what-if', `prompt:style=@${join(fixtures, 'strict-style.md')}`);
    expect(whatIf.stdout).toContain(`what-if of run ${runId}`);
    expect(whatIf.stdout).toContain('prompt of style');
    expect(whatIf.stdout).toMatch(/model calls\s+3\s+\| 3: 1 recorded, 2 new, 0 to restore context/);
    expect(whatIf.stdout).toContain('new calls for: review, style');
    expect(whatIf.stdout).toMatch(/Approve as is\.\s+\| Request changes: rename `x`\./);
    expect(whatIf.stdout).toContain('1 run, 0 regressed');
    expect(whatIf.code).toBe(0);

    // A changed prompt whose verdict never ends (it keeps calling a tool that does not exist) fails the run: a regression, exit 1.
    const failing = await troupe('replay', runId, '--store', store, '--agents', agents, '--script', join(fixtures, 'review-looping-script.json'), '--what-if', 'prompt:style=Be strict.');
    expect(failing.stdout).toContain('what-if run failed: max_turns_exceeded');
    expect(failing.stdout).toContain('REGRESSED');
    expect(failing.stdout).toContain('1 run, 1 regressed');
    expect(failing.code).toBe(1);
    expect((await troupe('replay', runId, '--store', store, '--agents', agents, '--what-if', 'prompt=x')).stderr).toContain('Expected --what-if prompt:<agent>=<text>');
    expect((await troupe('replay', runId, '--store', store)).code).toBe(2);
  });

  it('fork: a team forked at a round with its task changed, continued from the agent files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-travel-'));
    dirs.push(dir);
    const loopAgents = join(dir, 'agents');
    mkdirSync(loopAgents);
    writeFileSync(join(loopAgents, 'lead.md'), '---\nteam: { members: [writer], lead: lead, terminationMode: max-rounds, maxRounds: 2 }\n---\nLead the writing.\n');
    writeFileSync(join(loopAgents, 'writer.md'), '---\n---\nWrite.\n');
    const store = join(dir, 'store');
    const ran = await troupe('run', loopAgents, 'lead', 'A haiku', '--store', store, '--quiet');
    expect(ran.code).toBe(0);
    const runId = (JSON.parse((await troupe('runs', '--store', store, '--json')).stdout) as { runId: string }).runId;
    const checkpoints = await troupe('runs', runId, '--store', store);
    expect(checkpoints.stdout.split('\n')[0]).toMatch(/^#\s+type\s+kind\s+path\s+where$/);
    expect(checkpoints.stdout).toMatch(/\n1\s+saved\s+team\s+\/team:lead \(team\)#0\s+round 1\n2\s+saved\s+team\s+\/team:lead \(team\)#0\s+round 2\n3\s+finished/);
    const fork = await troupe('fork', runId, '--at', '1', '--store', store, '--fork-id', 'forked', '--set', '/state/task=A limerick', '--agents', loopAgents);
    expect(fork.stderr).toBe("troupe: adapter scripted (the default): offline replies, not a model's (routers pick their first destination, agents echo); --adapter or TROUPE_ADAPTER picks a model");
    expect(fork.code).toBe(0);
    expect(fork.stdout).toContain(`fork: forked of ${runId} at checkpoint 1 (team /team:lead (team)#0, round 1)`);
    expect(fork.stdout).toContain('changed /state/task = "A limerick"');
    expect(fork.stdout).toContain('agent: lead   status: completed (max-rounds)');
    // Round 2 ran again, on the changed task; round 1 did not.
    const turns = (await readRun('forked', { store: fileStore(store) })).events.filter((e) => e.type === 'model.turn') as Array<TroupeEvent<'model.turn'>>;
    expect(turns.length).toBe(2);
    expect(turns.every((t) => JSON.stringify(t.input).includes('A limerick'))).toBe(true);
    const runs = await troupe('runs', '--store', store);
    expect(runs.stdout).toMatch(new RegExp(`\\nforked\\s+lead \\(team\\)\\s+completed \\(max-rounds\\).*${runId} @1`));
    expect((await troupe('fork', runId, '--at', 'x', '--store', store)).code).toBe(2);
    expect((await troupe('fork', runId, '--at', '99', '--store', store)).stderr).toMatch(/^unknown_checkpoint: Run ".*" has no checkpoint 99/);
  });
});
