import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { fileStore } from '../../src/persistence/file-store.js';
import { readRun } from '../../src/persistence/run-log.js';
import { SimulatedClock } from '../../src/core/clock.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { executePlan } from '../../src/plan/engine/execute.js';
import { chunk, drive, planOf } from '../plan/helpers.js';

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

describe('troupe replay and fork of plan runs (no agent files: the log holds the plan)', () => {
  const templates = join(import.meta.dirname, '..', 'fixtures', 'templates');

  /** The CLI on a simulated clock (the template's script has latencies), advanced until it exits. */
  async function driven(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const clock = new SimulatedClock();
    const code = await drive(clock, main(args, { out: (t) => out.push(t), err: (t) => err.push(t), env: {}, clock }));
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  }

  /** A file store with one template run; its id. */
  async function templateRun(): Promise<{ store: string; runId: string }> {
    const store = mkdtempSync(join(tmpdir(), 'troupe-travel-plan-'));
    dirs.push(store);
    const ran = await driven('run', '--template', join(templates, 'fix-module.yaml'), '--set', 'module=cache', '--script', join(templates, 'script.json'), '--store', store, '--quiet');
    expect(ran.code).toBe(0);
    const runId = /^run: (\S+)/m.exec(ran.stdout)![1]!;
    return { store, runId };
  }

  it('replay: a template run replays from its log alone, with no model call', async () => {
    const { store, runId } = await templateRun();
    expect((await troupe('runs', '--store', store)).stdout).toMatch(new RegExp(`\\n${runId}\\s+plan\\s+completed`));
    // No adapter is built: every answer comes from the log (a call it does not hold fails the replay).
    const replayed = await driven('replay', runId, '--store', store);
    expect(replayed.stderr).toBe('');
    expect(replayed.stdout).toBe(`${runId}: completed, 3 turns from the log, 0 model calls\nFixed, with a test.\n1 run, 0 failed to replay`);
    expect(replayed.code).toBe(0);
    // The whole store as a regression suite, and --what-if on a plan's role: only the calls of that role go to the model.
    const whatIf = await driven('replay', store, '--what-if', 'prompt:Implementation=Fix it twice.', '--script', join(templates, 'script.json'));
    expect(whatIf.stdout).toMatch(/model calls\s+3\s+\| 3: 2 recorded, 1 new, 0 to restore context/);
    expect(whatIf.stdout).toContain('1 run, 0 regressed');
    expect(whatIf.code).toBe(0);
  });

  it('fork: a template run forked at a chunk with its output edited, continued at once', async () => {
    const { store, runId } = await templateRun();
    expect((await troupe('runs', runId, '--store', store)).stdout).toMatch(/\n3\s+appended\s+plan\s+\/plan:plan#0\s+chunk 1 completed\n/);
    const fork = await driven('fork', runId, '--at', '3', '--store', store, '--fork-id', 'plan-fork', '--set', '/entry/output=The test of eviction is missing.', '--script', join(templates, 'script.json'));
    expect(fork.stderr).toBe('troupe: adapter scripted (the default, replies from --script)');
    expect(fork.code).toBe(0);
    expect(fork.stdout).toContain(`fork: plan-fork of ${runId} at checkpoint 3 (plan /plan:plan#0, chunk 1 completed)`);
    expect(fork.stdout).toContain('changed /entry/output = "The test of eviction is missing."');
    expect(fork.stdout).toContain('Fixed, with a test.');
    expect(fork.stdout).toMatch(/status: completed/);
    // Only chunk 2 ran again, on the edited result of chunk 1; chunks 0 and 1 came from the checkpoint.
    const turns = (await readRun('plan-fork', { store: fileStore(store) })).events.filter((e) => e.type === 'model.turn') as Array<TroupeEvent<'model.turn'>>;
    expect(turns.map((t) => t.agent)).toEqual(['Implementation']);
    expect(JSON.stringify(turns[0]!.input)).toContain('The test of eviction is missing.');
    // The fork replays like any run.
    expect((await driven('replay', 'plan-fork', '--store', store)).stdout).toContain('plan-fork: completed, 1 turns from the log, 0 model calls');
  });

  it('replay: a plan run made from code with executePlan and a store; a run the log cannot rebuild says why, in one line', async () => {
    const store = mkdtempSync(join(tmpdir(), 'troupe-travel-plan-'));
    dirs.push(store);
    const plan = planOf(chunk(0), chunk(1, [0], { role: 'Synthesis' }));
    const adapter = scriptedAdapter({ fallback: (request) => `${request.agent} did it` });
    await executePlan(plan, { adapter, store: fileStore(store), runId: 'from-code', task: 'Two steps' });
    const replayed = await troupe('replay', 'from-code', '--store', store);
    expect(replayed.stdout).toBe('from-code: completed, 2 turns from the log, 0 model calls\nSynthesis did it\n1 run, 0 failed to replay');
    expect(replayed.code).toBe(0);

    // A plan run whose log holds no plan (logged without its checkpoints): one line that says why.
    const log = await readRun('from-code', { store: fileStore(store) });
    const file = join(store, 'no-plan.jsonl');
    writeFileSync(file, log.events.filter((e) => !e.type.startsWith('checkpoint.')).map((e) => `${JSON.stringify(e)}\n`).join(''));
    const bare = await troupe('replay', file);
    expect(bare.stderr).toBe('from-code: invalid_argument: Run "from-code" is a plan run, but its log holds no plan (no checkpoint of it was saved: it ran without a store?), so troupe cannot rebuild it; replay it from code: replayRun(planRunnable(plan), log)');
    expect(bare.code).toBe(1);

    // A plan run made with its own roles asks what the log does not hold: the replay fails, and says what to do.
    await executePlan(plan, { adapter, store: fileStore(store), runId: 'own-roles', roles: { Generic: { system: 'You are terse.' } } });
    const diverged = await driven('replay', 'own-roles', '--store', store);
    expect(diverged.stderr).toMatch(/^own-roles: replay_divergence: Replay diverged: agent "Generic", session \d+, turn 1 is not in the recording, and no live adapter was given \(a plan run is rebuilt with troupe's default roles and no tools: one made with its own roles, tools or chunk runner replays from code\)$/);
    expect(diverged.code).toBe(1);
  });

  it('an agent-file run still needs --agents to replay, and says so', async () => {
    const store = await recorded();
    const runId = (JSON.parse((await troupe('runs', '--store', store, '--json')).stdout) as { runId: string }).runId;
    const replayed = await troupe('replay', runId, '--store', store);
    expect(replayed.stderr).toBe(`${runId}: invalid_argument: Run "${runId}" was made by "review + advisors" from agent files: give --agents <dir>, the folder it was made from`);
    expect(replayed.code).toBe(1);
    // A planning session (troupe dev's lead) moves on with a person's answers: it is not replayed.
    const session = join(store, 'session.jsonl');
    writeFileSync(session, `${JSON.stringify({ type: 'run.started', runId: 's-1', time: 1, runnable: 'planning-session', input: 'Plan it' })}\n`);
    expect((await troupe('replay', session)).stderr).toBe('s-1: invalid_argument: Run "s-1" is a planning session: it moves on with a person\'s answers, and is not replayed or forked; open it in troupe dev');
  });
});
