/**
 * The team's channel and its serialisable state: the transcript entries,
 * the checkpointed state of a team after each round, and its zod schema.
 * @module
 */
import { z } from 'zod';

/** How a team ended: it always completes (a team that cannot answer throws `TeamFailedError`). */
export type TeamStatus = 'completed';

/** Why a team ended: every member voted to conclude, the round limit, or its lead concluded it (none: `shouldContinue` stopped it). */
export type TeamReason = 'consensus' | 'max-rounds' | 'lead-decided';

/** The reasons a team's state and outcome may hold. */
export const teamReasons = ['consensus', 'max-rounds', 'lead-decided'] as const;

/** The termination modes of a team. */
export type TerminationMode = (typeof terminationModes)[number];

/** The termination modes of a team: by `consensus` of the members, after `max-rounds` only, or when the lead decides (`lead-decides`). */
export const terminationModes = ['consensus', 'max-rounds', 'lead-decides'] as const;

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
export const teamStateSchema = z.preprocess(legacyTeamState, z.object({
  schemaVersion: z.literal(1),
  team: z.string(),
  task: z.string(),
  terminationMode: z.enum(terminationModes),
  round: z.number().int().nonnegative(),
  transcript: z.array(teamMessageSchema),
  members: z.array(z.object({ name: z.string(), seen: z.number().int().nonnegative(), active: z.boolean() })),
  lead: z.object({ name: z.string(), seen: z.number().int().nonnegative() }),
  votes: z.array(z.string()),
  /** Set once the team has concluded: why (no reason when `shouldContinue` stopped it), and the lead's summary. */
  conclusion: z.preprocess(legacyConclusion, z.object({ reason: z.enum(teamReasons).optional(), summary: z.string().optional() }).optional()),
}));

const LEGACY_MODES: Record<string, TerminationMode> = { maxRounds: 'max-rounds', coordinatorDecides: 'lead-decides' };

/** A state saved before 0.1.0 (`coordinator`, `terminationMode: 'maxRounds' | 'coordinatorDecides'`) in today's words (`lead`, `max-rounds`, `lead-decides`). */
function legacyTeamState(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null) return raw;
  const { coordinator, ...state } = raw as Record<string, unknown>;
  const mode = state['terminationMode'];
  return {
    ...state,
    ...(coordinator !== undefined && state['lead'] === undefined ? { lead: coordinator } : {}),
    ...(typeof mode === 'string' && mode in LEGACY_MODES ? { terminationMode: LEGACY_MODES[mode] } : {}),
  };
}

/** A conclusion saved before 0.1.0 (`{ status: 'consensus' | 'coordinator' | 'max-rounds' | 'completed' }`) as `{ reason }`. */
function legacyConclusion(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || !('status' in raw)) return raw;
  const { status, ...rest } = raw as { status: unknown };
  const reason = status === 'coordinator' ? 'lead-decided' : status === 'completed' ? undefined : status;
  return reason === undefined ? rest : { ...rest, reason };
}


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
