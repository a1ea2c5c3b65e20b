/**
 * A participant of a team (a member or the lead). An agent keeps one
 * session for the whole team; any other runnable is run once per turn and
 * speaks through its outcome's terminal agent.
 * @module
 */
import type { RunContext } from '../core/context.js';
import type { OutcomeStatus, Runnable } from '../core/runnable.js';
import type { Agent, Conversation } from './agent.js';
import { concludeTool, parseTeamReply, voteTool, type ProtocolRecord } from './team-protocol.js';
import { defined } from '../core/defined.js';

/** What a participant said in one turn. */
export interface TeamReply {
  /** The speaker: the agent, or the terminal agent of a runnable member. */
  from: string;
  /** The broadcast text, markers removed. */
  text: string;
  /** Voted to conclude (tool or marker). */
  vote: boolean;
  /** The reason given with `vote_conclude`. */
  reason?: string;
  /** Concluded the team (the lead only; tool or marker). */
  conclude: boolean;
  /** The summary given with `conclude_team`. */
  summary?: string;
}

/** True when `runnable` is an {@link Agent} (it can hold a session). */
export function isAgent(runnable: Runnable): runnable is Agent {
  return runnable.kind === 'agent' && typeof (runnable as Partial<Agent>).converse === 'function';
}

/** An op node kept open across turns, so every turn's usage lands under the participant. */
interface Scope {
  ctx: RunContext;
  close(status: OutcomeStatus): Promise<void>;
}

function openScope(parent: RunContext, name: string, agentName: string | undefined): Promise<Scope> {
  return new Promise<Scope>((resolve, reject) => {
    let release: (status: OutcomeStatus) => void = () => undefined;
    const done = new Promise<OutcomeStatus>((r) => (release = r));
    const where = { kind: 'team-member', name, ...defined({ agent: agentName }) };
    const finished = parent.enter(where, async (ctx) => {
      resolve({
        ctx,
        async close(status) {
          release(status);
          await finished.catch(() => undefined);
        },
      });
      return { output: '', agent: agentName ?? name, status: await done };
    });
    finished.catch(reject);
  });
}

/** One participant of a running team. */
export class TeamParticipant {
  /** True until the participant's current session has been sent anything. */
  fresh = true;
  #scope: Scope | undefined;
  #conversation: Conversation | undefined;
  #record: ProtocolRecord = {};

  constructor(
    readonly runnable: Runnable,
    readonly role: 'member' | 'lead',
    readonly canConclude: boolean,
  ) {}

  /** The participant's name (the runnable's). */
  get name(): string {
    return this.runnable.name;
  }

  /** True when this participant uses the tool form of the protocol. */
  usesTools(ctx: RunContext): boolean {
    return isAgent(this.runnable) && this.runnable.resolveAdapter(ctx).capabilities.tools;
  }

  /**
   * Send one turn and return what the participant said. A runnable member
   * runs under the checkpoint scope `scope` (the round), so the checkpoints
   * of patterns inside it are found again when a round is resumed.
   */
  async turn(input: string, parent: RunContext, scope?: string): Promise<TeamReply> {
    this.#scope ??= await openScope(parent, this.name, isAgent(this.runnable) ? this.name : undefined);
    const ctx = this.#scope.ctx;
    this.#record = {};
    let from: string;
    let raw: string;
    if (isAgent(this.runnable)) {
      if (!this.#conversation || this.#conversation.handle.closed) {
        const record = () => this.#record;
        const tools = !this.usesTools(ctx) ? [] : this.role === 'member' ? [voteTool(record)] : this.canConclude ? [concludeTool(record)] : [];
        this.#conversation = await this.runnable.converse(ctx, tools.length > 0 ? { extraTools: tools } : {});
      }
      raw = (await this.#conversation.send(input)).text;
      from = this.name;
    } else {
      const outcome = await this.runnable.run(input, scope === undefined ? ctx : ctx.withCheckpointScope(scope));
      raw = outcome.output;
      from = outcome.agent;
    }
    const parsed = parseTeamReply(raw);
    const { vote, conclude } = this.#record;
    const reply: TeamReply = {
      from,
      text: parsed.text,
      vote: this.role === 'member' && (vote !== undefined || parsed.vote),
      conclude: this.canConclude && (conclude !== undefined || parsed.conclude),
    };
    if (reply.vote && vote !== undefined) reply.reason = vote;
    if (reply.conclude && conclude !== undefined) reply.summary = conclude;
    return reply;
  }

  /** Close the session and the participant's op node. */
  async close(status: OutcomeStatus): Promise<void> {
    const conversation = this.#conversation;
    this.#conversation = undefined;
    await conversation?.close().catch(() => undefined);
    await this.#scope?.close(status);
    this.#scope = undefined;
  }
}
