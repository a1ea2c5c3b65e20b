import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimulatedClock, sleep } from '../../src/core/clock.js';
import { ConfigurationError } from '../../src/core/errors.js';
import { NotRunningError } from '../../src/core/control.js';
import { defineRunnable } from '../../src/core/runnable.js';
import { run, startRun } from '../../src/core/run.js';
import type { TroupeEvent, TroupeEventName } from '../../src/core/events.js';
import { agent } from '../../src/patterns/agent.js';
import { TeamControl, team, type TeamVote } from '../../src/patterns/team.js';
import { teamStateSchema, type TeamState } from '../../src/patterns/team-state.js';
import { parseTeamReply } from '../../src/patterns/team-protocol.js';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { checkpointKey } from '../../src/core/checkpoint.js';
import { resume } from '../../src/core/resume.js';
import type { Store } from '../../src/core/store.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { checkpointRecorder } from '../helpers/checkpoints.js';

const vote = (reason = 'done') => ({ toolCalls: [{ name: 'vote_conclude', arguments: { reason } }] });
const intro = (self: string, members: string, tools = true) =>
  `Team task:\nReview PR 7\n\nYou are "${self}", a member of a team (${members}); "lead" leads it and writes the final answer. ` +
  `Each turn, reply with your message to the team. When you think the team is done, ` +
  (tools ? 'call the vote_conclude tool with your reason' : 'write [[VOTE_CONCLUDE]] on a line of its own') +
  '; speaking again without voting withdraws your vote.';
const leadIntro = (members: string) => `Team task:\nReview PR 7\n\nYou are "lead", the lead of a team (${members}). At the end you write the final answer.`;
const pick = <K extends TroupeEventName>(events: TroupeEvent[], type: K) =>
  events.filter((e) => e.type === type) as unknown as Array<TroupeEvent<K>>;

describe('team', () => {
  it('runs a two-member team to consensus; each member is sent only what it has not seen', async () => {
    const adapter = scriptedAdapter({
      replies: {
        a: ['A1', vote('tests pass'), 'A2'],
        b: ['B1', vote(), 'B2'],
        lead: ['Ship it.'],
      },
    });
    const events: TroupeEvent[] = [];
    const panel = team({ members: [agent({ name: 'a' }), agent({ name: 'b' })], lead: agent({ name: 'lead' }) });
    const result = await run(panel, 'Review PR 7', { adapter, onEvent: (e) => events.push(e) });

    expect(result).toMatchObject({ output: 'Ship it.', agent: 'lead', status: 'completed', reason: 'consensus', rounds: 2 });
    expect(result.transcript).toEqual([
      { from: 'a', round: 1, text: 'A1' },
      { from: 'b', round: 1, text: 'B1' },
      { from: 'a', round: 2, text: 'A2', vote: true },
      { from: 'b', round: 2, text: 'B2', vote: true },
    ]);
    const a = adapter.inputsOf('a');
    expect(a[0]).toBe(`${intro('a', 'a, b')}\n\nRound 1. No new messages.`);
    expect(a[1]).toBe('Round 2. New messages:\n[b, round 1]: B1');
    expect(a[2]).toMatch(/^\[tool result vote_conclude#.*\] Vote recorded\.$/);
    expect(adapter.inputsOf('b')[1]).toBe('Round 2. New messages:\n[a, round 1]: A1');
    expect(adapter.inputsOf('lead')).toEqual([
      `${leadIntro('a, b')}\n\nRound 2. New messages:\n[a, round 1]: A1\n[b, round 1]: B1\n[a, round 2, votes to conclude]: A2\n[b, round 2, votes to conclude]: B2` +
        '\n\nThe team has finished: every member voted to conclude. Write the final answer to the task.',
    ]);
    // one session per participant for the whole team, all closed at the end
    expect(adapter.sessions.map((s) => s.agent).sort()).toEqual(['a', 'b', 'lead']);
    expect(adapter.sessions.find((s) => s.agent === 'a')?.tools?.map((t) => t.name)).toEqual(['vote_conclude']);
    expect(adapter.sessions.find((s) => s.agent === 'lead')?.tools).toBeUndefined();
    expect(adapter.closedSessions).toBe(3);

    expect(pick(events, 'team.round.started').map((e) => [e.round, e.members])).toEqual([[1, ['a', 'b']], [2, ['a', 'b']]]);
    expect(pick(events, 'team.message').map((e) => e.message.text)).toEqual(['A1', 'B1', 'A2', 'B2']);
    expect(pick(events, 'team.vote').map((e) => [e.member, e.round, e.vote, e.reason])).toEqual([['a', 2, true, 'tests pass'], ['b', 2, true, 'done']]);
    const [concluded] = pick(events, 'team.concluded');
    expect(concluded).toMatchObject({ team: 'team', status: 'completed', reason: 'consensus', rounds: 2, output: 'Ship it.' });
    expect(concluded?.transcript).toHaveLength(4);
    // usage lands under one op node per participant
    const teamNode = result.trace.children[0]!;
    expect(teamNode.kind).toBe('team');
    expect(teamNode.children.map((c) => [c.kind, c.name])).toEqual([['team-member', 'a'], ['team-member', 'b'], ['team-member', 'lead']]);
    expect(result.usage.turns).toBe(7);
  });

  it('runs N members turn by turn: later speakers also see this round\'s earlier messages', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: /^m\d$/, reply: (req) => `${req.agent} r${req.turn}` },
        { agent: 'lead', reply: 'Done.' },
      ],
    });
    const members = ['m1', 'm2', 'm3', 'm4'].map((name) => agent({ name }));
    const result = await run(team({ members, lead: agent({ name: 'lead' }), terminationMode: 'max-rounds', maxRounds: 2, turnBased: true }), 'Review PR 7', { adapter });
    expect(result).toMatchObject({ status: 'completed', reason: 'max-rounds' });
    expect(result.transcript.map((m) => m.text)).toEqual(['m1 r1', 'm2 r1', 'm3 r1', 'm4 r1', 'm1 r2', 'm2 r2', 'm3 r2', 'm4 r2']);
    expect(adapter.inputsOf('m3')).toEqual([
      `${intro('m3', 'm1, m2, m3, m4')}\n\nRound 1. New messages:\n[m1, round 1]: m1 r1\n[m2, round 1]: m2 r1`,
      'Round 2. New messages:\n[m4, round 1]: m4 r1\n[m1, round 2]: m1 r2\n[m2, round 2]: m2 r2',
    ]);
    expect(adapter.inputsOf('m1')[1]).toBe('Round 2. New messages:\n[m2, round 1]: m2 r1\n[m3, round 1]: m3 r1\n[m4, round 1]: m4 r1');
    // in order: no call of a later member starts before the earlier one answered
    expect(adapter.calls.filter((c) => c.agent !== 'lead').map((c) => c.agent)).toEqual(['m1', 'm2', 'm3', 'm4', 'm1', 'm2', 'm3', 'm4']);
  });

  it('stops at maxRounds when members never all vote, in every mode', async () => {
    const adapter = scriptedAdapter({
      rules: [
        { agent: 'a', reply: 'A [[VOTE_CONCLUDE]] not on its own line' },
        { agent: 'b', reply: 'B' },
        { agent: 'lead', match: 'Review round', reply: 'Keep going.' },
        { agent: 'lead', reply: 'Best effort.' },
      ],
    });
    const saves = checkpointRecorder<TeamState>('team');
    const panel = team({
      members: [agent({ name: 'a' }), agent({ name: 'b' })],
      lead: agent({ name: 'lead' }),
      terminationMode: 'lead-decides',
      maxRounds: 3,
    });
    const result = await run(panel, 'Review PR 7', { adapter, store: saves.store });
    const checkpoints = saves.states;
    expect(result).toMatchObject({ status: 'completed', reason: 'max-rounds', rounds: 3, output: 'Best effort.' });
    expect(adapter.inputsOf('a')).toHaveLength(3);
    expect(result.transcript.filter((m) => m.from === 'lead').map((m) => m.round)).toEqual([1, 2, 3]);
    expect(checkpoints.map((s) => [s.round, s.conclusion?.reason])).toEqual([[1, undefined], [2, undefined], [3, 'max-rounds']]);
  });

  it('stops after 10 rounds by default in maxRounds mode, and maxRounds bounds consensus mode too', async () => {
    const adapter = scriptedAdapter({
      rules: [{ agent: 'a', reply: (r) => (r.text.startsWith('[tool result') ? 'Agreed.' : vote()) }, { agent: 'b', reply: 'B' }, { agent: 'lead', reply: 'Final.' }],
    });
    const members = () => [agent({ name: 'a' }), agent({ name: 'b' })];
    const byDefault = await run(team({ members: members(), lead: agent({ name: 'lead' }), terminationMode: 'max-rounds' }), 'Review PR 7', { adapter });
    expect(byDefault).toMatchObject({ status: 'completed', reason: 'max-rounds', rounds: 10, output: 'Final.' });
    expect(adapter.inputsOf('b')).toHaveLength(10);

    const bounded = await run(team({ members: members(), lead: agent({ name: 'lead' }), maxRounds: 2 }), 'Review PR 7', { adapter });
    expect(bounded).toMatchObject({ status: 'completed', reason: 'max-rounds', rounds: 2 });
    // a votes every round; b never does, so no round reaches consensus
    expect(bounded.transcript.map((m) => [m.from, m.round, m.vote ?? false])).toEqual([['a', 1, true], ['b', 1, false], ['a', 2, true], ['b', 2, false]]);
  });

  it('lets the lead review each round and conclude with conclude_team', async () => {
    const adapter = scriptedAdapter({
      replies: {
        a: ['A1', 'A2'],
        b: ['B1', 'B2'],
        lead: ['Focus on the tests.', { toolCalls: [{ name: 'conclude_team', arguments: { summary: 'Approved with one fix' } }] }, '', 'Approve after fixing the test.'],
      },
    });
    const panel = team({ members: [agent({ name: 'a' }), agent({ name: 'b' })], lead: agent({ name: 'lead' }), terminationMode: 'lead-decides' });
    const result = await run(panel, 'Review PR 7', { adapter });
    expect(result).toMatchObject({ status: 'completed', reason: 'lead-decided', rounds: 2, summary: 'Approved with one fix', output: 'Approve after fixing the test.', agent: 'lead' });
    expect(adapter.sessions.find((s) => s.agent === 'lead')?.tools?.map((t) => t.name)).toEqual(['conclude_team']);
    const lead = adapter.inputsOf('lead');
    expect(lead[0]).toContain('After each round you review it: reply with guidance for the team, or, when it is done, call the conclude_team tool with a summary.');
    expect(lead[0]).toMatch(/Round 1\. New messages:\n\[a, round 1\]: A1\n\[b, round 1\]: B1\n\nReview round 1: reply with guidance for the team, or conclude\.$/);
    expect(lead[1]).toBe('Round 2. New messages:\n[a, round 2]: A2\n[b, round 2]: B2\n\nReview round 2: reply with guidance for the team, or conclude.');
    expect(lead[3]).toBe('Round 2. No new messages.\n\nThe team has finished: you concluded it. Write the final answer to the task.');
    expect(adapter.inputsOf('a')[1]).toBe('Round 2. New messages:\n[b, round 1]: B1\n[lead, round 1]: Focus on the tests.');
  });

  it('takes a chain as a member through its terminal agent, sending it only unseen messages', async () => {
    const adapter = scriptedAdapter({
      replies: {
        a: ['A1', vote(), 'A2'],
        drafter: ['draft 1', 'draft 2'],
        editor: ['Edited 1', 'Edited 2\n[[VOTE_CONCLUDE]]'],
        lead: ['Final.'],
      },
    });
    const drafter = agent({ name: 'drafter' });
    const editor = agent({ name: 'editor' });
    const pipeline = defineRunnable({
      name: 'pipeline',
      kind: 'handoff',
      async run(input, ctx) {
        const first = await drafter.run(input, ctx);
        const second = await editor.run(`${input}\n\n${first.output}`, ctx);
        return { output: second.output, agent: second.agent, status: 'completed' };
      },
    });
    const result = await run(team({ members: [agent({ name: 'a' }), pipeline], lead: agent({ name: 'lead' }) }), 'Review PR 7', { adapter });
    expect(result).toMatchObject({ status: 'completed', reason: 'consensus' });
    expect(result.transcript).toEqual([
      { from: 'a', round: 1, text: 'A1' },
      { from: 'editor', member: 'pipeline', round: 1, text: 'Edited 1' },
      { from: 'a', round: 2, text: 'A2', vote: true },
      { from: 'editor', member: 'pipeline', round: 2, text: 'Edited 2', vote: true },
    ]);
    expect(adapter.inputsOf('drafter')).toEqual([
      `${intro('pipeline', 'a, pipeline', false)}\n\nRound 1. No new messages.`,
      'Round 2. New messages:\n[a, round 1]: A1',
    ]);
    expect(adapter.inputsOf('a')[1]).toBe('Round 2. New messages:\n[editor, round 1]: Edited 1');
  });

  it('retries a failing member once, then goes on without it and says so', async () => {
    const adapter = scriptedAdapter({
      replies: {
        a: ['A1', vote(), 'A2'],
        b: [{ fault: 'throw', error: 'boom 1' }, { fault: 'throw', error: 'boom 2' }],
        lead: ['Final.'],
      },
    });
    const events: TroupeEvent[] = [];
    const panel = team({ members: [agent({ name: 'a' }), agent({ name: 'b' })], lead: agent({ name: 'lead' }) });
    const result = await run(panel, 'Review PR 7', { adapter, onEvent: (e) => events.push(e) });
    expect(adapter.inputsOf('b')).toHaveLength(2);
    expect(adapter.inputsOf('b')[1]).toBe(adapter.inputsOf('b')[0]);
    expect(result).toMatchObject({ status: 'completed', reason: 'consensus' });
    expect(result.transcript).toEqual([
      { from: 'a', round: 1, text: 'A1' },
      { from: 'team', round: 1, text: 'b failed twice and left the team: boom 2' },
      { from: 'a', round: 2, text: 'A2', vote: true },
    ]);
    expect(pick(events, 'team.round.started')[1]?.members).toEqual(['a']);
    expect(pick(events, 'warning').map((e) => e.code)).toEqual(['team_member_failed', 'team_member_failed']);
  });

  it('fails with TeamFailedError when every member fails', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: /^[ab]$/, reply: { fault: 'throw', error: 'down' } }], fallback: 'unused' });
    const panel = team({ members: [agent({ name: 'a' }), agent({ name: 'b' })], lead: agent({ name: 'lead' }) });
    const error = await run(panel, 'Review PR 7', { adapter }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'TeamFailedError', code: 'team_failed', message: 'Team "team" failed: every member failed' });
    const state = (error as { details: { state: TeamState } }).details.state;
    expect(state.transcript.map((m) => m.text)).toEqual(['a failed twice and left the team: down', 'b failed twice and left the team: down']);
    expect(adapter.inputsOf('lead')).toEqual([]);
  });

  it('stops at once when cancelled mid-round: no model call after the abort', async () => {
    const controller = new AbortController();
    const adapter = scriptedAdapter({
      replies: { a: [() => { controller.abort(); return 'A1'; }] },
      fallback: 'never',
    });
    const panel = team({ members: [agent({ name: 'a' }), agent({ name: 'b' })], lead: agent({ name: 'lead' }), turnBased: true });
    await expect(run(panel, 'Review PR 7', { adapter, signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
    expect(adapter.calls.map((c) => c.agent)).toEqual(['a']);
    expect(adapter.closedSessions).toBe(1);
  });

  it('cancels the members in flight in a parallel round and calls no one after', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ fallback: 'slow', latencyMs: 100, clock });
    const panel = team({ members: [agent({ name: 'a' }), agent({ name: 'b' })], lead: agent({ name: 'lead' }) });
    const handle = startRun(panel, 'Review PR 7', { adapter, clock });
    handle.result.catch(() => undefined);
    await clock.advance(50);
    handle.cancel();
    await expect(handle.result).rejects.toMatchObject({ code: 'cancelled' });
    await clock.runAll();
    expect(adapter.calls.map((c) => c.agent)).toEqual(['a', 'b']);
    expect(handle.trace.children[0]?.status).toBe('cancelled');
  });

  it('rejects on a configuration error and stops the turns still in flight', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ fallback: 'slow', latencyMs: 100, clock });
    const broken = defineRunnable({
      name: 'broken',
      kind: 'custom',
      async run(_input, ctx) {
        await sleep(clock, 50, ctx.signal);
        throw new ConfigurationError('Agent "x" names adapter "missing", which is not registered', { code: 'unknown_adapter' });
      },
    });
    const panel = team({ members: [broken, agent({ name: 'b' })], lead: agent({ name: 'lead' }) });
    const handle = startRun(panel, 'Review PR 7', { adapter, clock });
    handle.result.catch(() => undefined);
    await clock.advance(50);
    await expect(handle.result).rejects.toMatchObject({ code: 'unknown_adapter' });
    await clock.runAll();
    expect(adapter.calls.map((c) => c.agent)).toEqual(['b']);
    expect(adapter.closedSessions).toBe(1);
  });

  it('withdraws a vote when a member speaks again without voting', async () => {
    const adapter = scriptedAdapter({
      replies: {
        a: [vote(), 'A1', 'A2', vote(), 'A3'],
        b: ['B1', vote(), 'B2', vote(), 'B3'],
        lead: ['Final.'],
      },
    });
    const votes: TeamVote[] = [];
    const panel = team({ members: [agent({ name: 'a' }), agent({ name: 'b' })], lead: agent({ name: 'lead' }), onVote: (v) => void votes.push(v) });
    const result = await run(panel, 'Review PR 7', { adapter });
    expect(result).toMatchObject({ status: 'completed', reason: 'consensus', rounds: 3 });
    expect(votes).toEqual([
      { member: 'a', round: 1, vote: true, reason: 'done' },
      { member: 'a', round: 2, vote: false },
      { member: 'b', round: 2, vote: true, reason: 'done' },
      { member: 'a', round: 3, vote: true, reason: 'done' },
      { member: 'b', round: 3, vote: true, reason: 'done' },
    ]);
  });

  it('uses the text form without tools: markers on their own line, stripped from the broadcast', async () => {
    const adapter = scriptedAdapter({
      capabilities: { tools: false },
      replies: {
        a: ['A1', 'A2\n[[VOTE_CONCLUDE]]'],
        b: ['B1', '  [[VOTE_CONCLUDE]]  \nB2'],
        lead: ['Keep going.', 'Enough.\n[[TEAM_CONCLUDE]]', 'Final.'],
      },
    });
    const panel = team({ members: [agent({ name: 'a' }), agent({ name: 'b' })], lead: agent({ name: 'lead' }), terminationMode: 'lead-decides' });
    const result = await run(panel, 'Review PR 7', { adapter });
    expect(adapter.sessions.every((s) => s.tools === undefined)).toBe(true);
    expect(adapter.inputsOf('a')[0]).toBe(`${intro('a', 'a, b', false)}\n\nRound 1. No new messages.`);
    expect(adapter.inputsOf('lead')[0]).toContain('write [[TEAM_CONCLUDE]] on a line of its own.');
    expect(result).toMatchObject({ status: 'completed', reason: 'lead-decided', rounds: 2, output: 'Final.' });
    expect(result.transcript.slice(3)).toEqual([
      { from: 'a', round: 2, text: 'A2', vote: true },
      { from: 'b', round: 2, text: 'B2', vote: true },
      { from: 'lead', round: 2, text: 'Enough.' },
    ]);
  });

  it('delivers injected messages at the next round, to one member or to all', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: /^[ab]$/, reply: (r) => `${r.agent}${r.turn}` }, { agent: 'lead', reply: 'Final.' }] });
    const messages: string[] = [];
    const panel = team({
      members: [agent({ name: 'a' }), agent({ name: 'b' })],
      lead: agent({ name: 'lead' }),
      terminationMode: 'max-rounds',
      maxRounds: 3,
      onMessage: (m) => void messages.push(`${m.from}:${m.text}`),
      shouldContinue: (state) => {
        if (state.round === 1) {
          control.post('a', 'Check the security of the change.');
          expect(() => control.post('zed', 'x')).toThrow(/no participant "zed"/);
        }
        return state.round < 2;
      },
    });
    // Messages go through the run's control: the team itself keeps no queue.
    const control = new TeamControl();
    expect(() => control.post('a', 'x')).toThrow(NotRunningError);
    const result = await run(panel, 'Review PR 7', { adapter, control });
    expect(result).toMatchObject({ status: 'completed', rounds: 2 });
    expect(adapter.inputsOf('a')[1]).toBe('Round 2. New messages:\n[b, round 1]: b1\n[user, round 2, to you]: Check the security of the change.');
    expect(adapter.inputsOf('b')[1]).toBe('Round 2. New messages:\n[a, round 1]: a1');
    expect(messages).toEqual(['a:a1', 'b:b1', 'user:Check the security of the change.', 'a:a2', 'b:b2']);
    expect(adapter.inputsOf('lead')[0]).toContain('The team has finished: the discussion was stopped.');
  });

  it('keeps each run\'s posted messages to itself', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: /^[ab]$/, reply: (r) => `${r.agent}${r.turn}` }, { agent: 'lead', reply: 'Final.' }] });
    const first = new TeamControl();
    const second = new TeamControl();
    const panel = team({
      members: [agent({ name: 'a' }), agent({ name: 'b' })],
      lead: agent({ name: 'lead' }),
      terminationMode: 'max-rounds',
      maxRounds: 2,
    });
    const running = Promise.all([run(panel, 'Review PR 7', { adapter, control: first }), run(panel, 'Review PR 8', { adapter, control: second })]);
    first.post('a', 'Only for the first run.');
    const [one, two] = await running;
    expect(one.transcript.some((m) => m.text === 'Only for the first run.')).toBe(true);
    expect(two.transcript.some((m) => m.text === 'Only for the first run.')).toBe(false);
  });

  it('checkpoints a serialisable state after every round and resumes from it', async () => {
    const script = () =>
      scriptedAdapter({ rules: [{ agent: /^[ab]$/, reply: (r) => `${r.agent} turn ${r.turn}` }, { agent: 'lead', reply: 'Final.' }] });
    const make = () => team({ members: [agent({ name: 'a' }), agent({ name: 'b' })], lead: agent({ name: 'lead' }), terminationMode: 'max-rounds', maxRounds: 3 });
    const recorded = checkpointRecorder<TeamState>('team');
    const full = await run(make(), 'Review PR 7', { adapter: script(), store: recorded.store });
    const states = recorded.states;
    expect(states.map((s) => s.round)).toEqual([1, 2, 3]);
    for (const s of states) expect(teamStateSchema.parse(JSON.parse(JSON.stringify(s)))).toEqual(s);
    expect(states[0]).toEqual({
      schemaVersion: 1,
      team: 'team',
      task: 'Review PR 7',
      terminationMode: 'max-rounds',
      round: 1,
      transcript: [{ from: 'a', round: 1, text: 'a turn 1' }, { from: 'b', round: 1, text: 'b turn 1' }],
      members: [{ name: 'a', seen: 0, active: true }, { name: 'b', seen: 0, active: true }],
      lead: { name: 'lead', seen: 0 },
      votes: [],
    });

    const saves = checkpointRecorder<TeamState>('team', 1);
    await expect(run(make(), 'Review PR 7', { adapter: script(), store: saves.store, runId: 't', signal: saves.signal, onEvent: saves.onEvent })).rejects.toThrow();
    expect(saves.states).toEqual([states[0]]);
    const adapter = script();
    const resumed = await resume(make(), 't', { adapter, store: saves.store });
    expect(resumed).toMatchObject({ status: 'completed', reason: 'max-rounds', rounds: 3 });
    // a reopened session is sent the intro and everything it may see, its own messages marked
    expect(adapter.inputsOf('a')).toEqual([
      `${intro('a', 'a, b')}\n\nRound 2. New messages:\n[a (you), round 1]: a turn 1\n[b, round 1]: b turn 1`,
      'Round 3. New messages:\n[b, round 2]: b turn 1',
    ]);
    expect(resumed.transcript.map((m) => [m.from, m.round])).toEqual(full.transcript.map((m) => [m.from, m.round]));
  });

  it('validates its options with clear messages', () => {
    const lead = agent({ name: 'lead' });
    expect(() => team({ members: [], lead: lead })).toThrow('Expected `members` to be a non-empty array of runnables, got [] (array)');
    expect(() => team({ members: [agent({ name: 'a' })], lead: lead, maxRounds: 0 })).toThrow('Expected `maxRounds` to be a positive integer, got 0 (number)');
    expect(() => team({ members: [agent({ name: 'a' })], lead: lead, terminationMode: 'vote' as never })).toThrow(/terminationMode/);
    expect(() => team({ members: [agent({ name: 'a' }), agent({ name: 'a' })], lead: lead })).toThrow(/two participants named "a"/);
    expect(() => team({ members: [agent({ name: 'user' })], lead: lead })).toThrow(/reserved/);
  });
});

describe('team state', () => {
  const fixture = () =>
    JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'team', 'state-v1.json'), 'utf8')) as unknown;

  it('resumes from a stored schemaVersion 1 state', async () => {
    const state = teamStateSchema.parse(fixture());
    const adapter = scriptedAdapter({ replies: { a: [vote(), 'Agreed.'], b: [vote(), 'Still good.'], lead: ['Approved.'] } });
    const panel = team({ name: 'review', members: [agent({ name: 'a' }), agent({ name: 'b' })], lead: agent({ name: 'lead' }) });
    // The state as the team's checkpoint in a run's store, and the run's log.
    const store = memoryStore();
    await store.set(checkpointKey('fx', '/team:review#0'), { schemaVersion: 1, kind: 'team', runId: 'fx', savedAt: 0, state, path: '/team:review#0' });
    await store.append('runs/fx/events', { type: 'run.started', runId: 'fx', time: 0, runnable: 'review', input: state.task });
    const result = await resume(panel, 'fx', { adapter, store });
    expect(result).toMatchObject({ status: 'completed', reason: 'consensus', rounds: 2, output: 'Approved.' });
    expect(adapter.inputsOf('a')[0]).toBe(
      `${intro('a', 'a, b')}\n\nRound 2. New messages:\n[user, round 1, to you]: Mind the migration.\n[a (you), round 1]: Looks fine.\n[b, round 1, votes to conclude]: Ship it.`,
    );
    expect(adapter.inputsOf('b')[0]).toBe(`${intro('b', 'a, b')}\n\nRound 2. New messages:\n[a, round 1]: Looks fine.\n[b (you), round 1, votes to conclude]: Ship it.`);
  });

  it('saves its checkpoint before the next round starts', async () => {
    const clock = new SimulatedClock();
    const adapter = scriptedAdapter({ rules: [{ agent: 'a', reply: 'A' }, { agent: 'lead', reply: 'Final.' }] });
    const seenAt: number[] = [];
    const inner = memoryStore();
    // A store whose checkpoint writes take a second on the clock.
    const store: Store = {
      ...inner,
      set: async (key, value) => {
        if (key.includes('/checkpoints/') && (value as { outcome?: unknown }).outcome === undefined) {
          seenAt.push(adapter.calls.length);
          await sleep(clock, 1000);
        }
        return inner.set(key, value);
      },
    };
    const panel = team({ members: [agent({ name: 'a' })], lead: agent({ name: 'lead' }), terminationMode: 'max-rounds', maxRounds: 2 });
    const result = run(panel, 'Review PR 7', { adapter, clock, store });
    await clock.advance(999);
    expect(adapter.calls).toHaveLength(1);
    await clock.runAll();
    await expect(result).resolves.toMatchObject({ status: 'completed', reason: 'max-rounds' });
    expect(seenAt).toEqual([1, 2]);
  });

  it('fails with TeamFailedError when the lead fails twice', async () => {
    const adapter = scriptedAdapter({ rules: [{ agent: 'a', reply: 'A' }, { agent: 'lead', reply: { fault: 'throw', error: 'lead down' } }] });
    const panel = team({ members: [agent({ name: 'a' })], lead: agent({ name: 'lead' }), terminationMode: 'lead-decides' });
    await expect(run(panel, 'Review PR 7', { adapter })).rejects.toMatchObject({ code: 'team_failed', message: 'Team "team" failed: the lead failed' });
    expect(adapter.inputsOf('lead')).toHaveLength(2);
  });

  it('parses protocol markers only on a line of their own, for any text', () => {
    expect(parseTeamReply('ok\n [[VOTE_CONCLUDE]] \nmore')).toEqual({ text: 'ok\nmore', vote: true, conclude: false });
    expect(parseTeamReply('say [[TEAM_CONCLUDE]] inline')).toEqual({ text: 'say [[TEAM_CONCLUDE]] inline', vote: false, conclude: false });
    expect(parseTeamReply('Example:\n```\n[[VOTE_CONCLUDE]]\n```\ndone')).toMatchObject({ vote: false });
    expect(parseTeamReply('ok\r\n[[TEAM_CONCLUDE]]\r\n')).toMatchObject({ text: 'ok', conclude: true });
    fc.assert(
      fc.property(fc.string(), fc.boolean(), (text, withVote) => {
        const parsed = parseTeamReply(withVote ? `${text}\n[[VOTE_CONCLUDE]]` : text);
        expect(parsed.text.split('\n').some((l) => l.trim() === '[[VOTE_CONCLUDE]]')).toBe(false);
        if (withVote) expect(parsed.vote).toBe(true);
      }),
    );
  });
});
