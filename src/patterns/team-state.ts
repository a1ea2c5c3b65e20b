/**
 * The team's channel and its serialisable state: the transcript entries,
 * the checkpointed state of a team after each round, and its zod schema.
 * @module
 */
import { z } from 'zod';

/** Why a team ended (the `status` of a {@link TeamOutcome}). */
export type TeamStatus = 'consensus' | 'coordinator' | 'max-rounds' | 'completed';

/** The termination modes of a team. */
export type TerminationMode = 'consensus' | 'maxRounds' | 'coordinatorDecides';

/** The `from` of notes the team itself writes (a member that left). */
export const TEAM_SENDER = 'team';
/** The `from` of messages injected by the application. */
export const USER_SENDER = 'user';

/** The zod schema of one {@link TeamMessage}. */
export const teamMessageSchema = z.object({
  from: z.string(),
  round: z.number().int().nonnegative(),
  text: z.string(),
  member: z.string().optional(),
  to: z.string().optional(),
  vote: z.boolean().optional(),
});

/**
 * The zod schema of a team's checkpointed state (`schemaVersion: 1`).
 * A resumed run validates the team's checkpoint against it.
 */
export const teamStateSchema = z.object({
  schemaVersion: z.literal(1),
  team: z.string(),
  task: z.string(),
  terminationMode: z.enum(['consensus', 'maxRounds', 'coordinatorDecides']),
  round: z.number().int().nonnegative(),
  transcript: z.array(teamMessageSchema),
  members: z.array(z.object({ name: z.string(), seen: z.number().int().nonnegative(), active: z.boolean() })),
  coordinator: z.object({ name: z.string(), seen: z.number().int().nonnegative() }),
  votes: z.array(z.string()),
  conclusion: z
    .object({ status: z.enum(['consensus', 'coordinator', 'max-rounds', 'completed']), summary: z.string().optional() })
    .optional(),
});

/**
 * One entry of the team's channel. `from` names the speaker (for a member
 * that is a chain, its terminal agent; `member` then names the member);
 * `to` is set on messages injected for one participant only; `vote` is set
 * when the speaker voted to conclude with this message.
 */
export type TeamMessage = z.infer<typeof teamMessageSchema>;

/** The state of a team after a round: a plain, serialisable object. */
export type TeamState = z.infer<typeof teamStateSchema>;

/** The participant a message counts as written by. */
export function authorOf(message: TeamMessage): string {
  return message.member ?? message.from;
}

/**
 * The messages of `transcript[from, upTo)` that `participant` may see:
 * everything addressed to all or to it, and (when `includeOwn`) its own.
 */
export function visibleTo(
  transcript: readonly TeamMessage[],
  participant: string,
  from: number,
  upTo: number,
  includeOwn: boolean,
): TeamMessage[] {
  return transcript
    .slice(from, upTo)
    .filter((m) => (m.to === undefined || m.to === participant) && (includeOwn || authorOf(m) !== participant));
}
