/**
 * The team protocol: the `vote_conclude` / `conclude_team` tools, their text
 * form (`[[VOTE_CONCLUDE]]`, `[[TEAM_CONCLUDE]]` on a line of their own), and
 * the text each participant is sent.
 * @module
 */
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../core/tools.js';
import { scanMarkerLines } from '../reflection/sentinels.js';
import { expectText } from '../text/lines.js';
import { authorOf, type TeamMessage, type TerminationMode } from './team-state.js';

/** The text-form line a member writes to vote to conclude. */
export const VOTE_MARKER = '[[VOTE_CONCLUDE]]';
/** The text-form line the lead writes to conclude the team. */
export const CONCLUDE_MARKER = '[[TEAM_CONCLUDE]]';

/** What a reply says besides its broadcast text. */
export interface ParsedReply {
  /** The reply with every marker line removed, trimmed. */
  text: string;
  /** A `[[VOTE_CONCLUDE]]` line was present. */
  vote: boolean;
  /** A `[[TEAM_CONCLUDE]]` line was present. */
  conclude: boolean;
}

/**
 * Strip the protocol's marker lines from a reply and report which were
 * present. A marker counts on a line of its own outside fenced code blocks;
 * line ends come back as `\n`. Linear; a non-string throws a
 * `ConfigurationError` (`invalid_argument`).
 */
export function parseTeamReply(text: string): ParsedReply {
  let vote = false;
  let conclude = false;
  const kept: string[] = [];
  scanMarkerLines(expectText(text, 'the reply of parseTeamReply'), markerOf, (line, marker) => {
    if (marker === 'vote') vote = true;
    else if (marker === 'conclude') conclude = true;
    else kept.push(line);
  });
  return { text: kept.join('\n').trim(), vote, conclude };
}

function markerOf(trimmed: string): 'vote' | 'conclude' | undefined {
  return trimmed === VOTE_MARKER ? 'vote' : trimmed === CONCLUDE_MARKER ? 'conclude' : undefined;
}

/** What the protocol tools record during one turn. */
export interface ProtocolRecord {
  vote?: string;
  conclude?: string;
}

// The protocol tools' parameters, made once: their JSON Schema is converted once (per schema), not at every turn of every run.
const voteParameters = z.object({ reason: z.string().describe('Why the team can conclude') });
const concludeParameters = z.object({ summary: z.string().describe('A short summary of what the team concluded') });

/** The `vote_conclude(reason)` tool; its calls are written to `record`. */
export function voteTool(record: () => ProtocolRecord): ToolDefinition<{ reason: string }> {
  return defineTool({
    name: 'vote_conclude',
    description: 'Vote to conclude the team discussion because the task is done. Speaking again without voting withdraws the vote.',
    parameters: voteParameters,
    execute: ({ reason }) => {
      record().vote = reason;
      return 'Vote recorded.';
    },
  });
}

/** The lead's `conclude_team(summary)` tool; its calls are written to `record`. */
export function concludeTool(record: () => ProtocolRecord): ToolDefinition<{ summary: string }> {
  return defineTool({
    name: 'conclude_team',
    description: 'Conclude the team discussion now; you will then be asked for the final answer.',
    parameters: concludeParameters,
    execute: ({ summary }) => {
      record().conclude = summary;
      return 'The team will conclude.';
    },
  });
}

/** What the first message of a participant's session needs. */
export interface IntroSpec {
  task: string;
  self: string;
  members: readonly string[];
  lead: string;
  role: 'member' | 'lead';
  tools: boolean;
  mode: TerminationMode;
}

/** The first message of a participant's session: the task and the protocol. */
export function renderIntro(spec: IntroSpec): string {
  const { task, self, members, lead, tools } = spec;
  const list = members.join(', ');
  if (spec.role === 'member') {
    const how = tools ? 'call the vote_conclude tool with your reason' : `write ${VOTE_MARKER} on a line of its own`;
    return (
      `Team task:\n${task}\n\n` +
      `You are "${self}", a member of a team (${list}); "${lead}" leads it and writes the final answer. ` +
      `Each turn, reply with your message to the team. When you think the team is done, ${how}; ` +
      'speaking again without voting withdraws your vote.'
    );
  }
  const review =
    spec.mode === 'lead-decides'
      ? ' After each round you review it: reply with guidance for the team, or, when it is done, ' +
        (tools ? 'call the conclude_team tool with a summary.' : `write ${CONCLUDE_MARKER} on a line of its own.`)
      : '';
  return `Team task:\n${task}\n\nYou are "${self}", the lead of a team (${list}).${review} At the end you write the final answer.`;
}

/** One message as a participant reads it. */
export function renderMessage(message: TeamMessage, reader: string): string {
  const own = authorOf(message) === reader ? ' (you)' : '';
  const tags = [`${message.from}${own}`, `round ${message.round}`];
  if (message.to !== undefined) tags.push('to you');
  if (message.vote) tags.push('votes to conclude');
  return `[${tags.join(', ')}]: ${message.text}`;
}

/** The block of new messages of one turn. */
export function renderMessages(messages: readonly TeamMessage[], reader: string, round: number): string {
  if (messages.length === 0) return `Round ${round}. No new messages.`;
  return `Round ${round}. New messages:\n${messages.map((m) => renderMessage(m, reader)).join('\n')}`;
}
