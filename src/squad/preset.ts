/**
 * The team preset: a team described as data (workers with prompts, a mode,
 * shared and routing context), whether it comes with troupe, from the user's
 * store or from a repository's `.squad/` folder.
 * @module
 */
import { z } from 'zod';
import { ParseError } from '../core/errors.js';
import { isSlug } from './slug.js';

/** How a preset's workers are run. */
export const TEAM_MODES = ['broadcast', 'sequential', 'orchestrator', 'orchestrator-reflect'] as const;

/** How a preset's workers are run: all at once, one after another, planned by an orchestrator, or planned and reviewed in a loop. */
export type TeamMode = (typeof TEAM_MODES)[number];

/** The mode of a preset that names none. */
export const DEFAULT_TEAM_MODE: TeamMode = 'orchestrator-reflect';

/** Where a preset comes from; a repository overrides the user, who overrides troupe. */
export type PresetSource = 'builtin' | 'user' | 'repo';

/** One worker of a preset: an agent that does work. */
export interface PresetWorker {
  /** The agent's name (a display name such as `Ripley` or `code-reviewer`). */
  name: string;
  /** The system prompt (a squad charter). Empty means "write a generic one". */
  systemPrompt: string;
  /** A short role (`Lead`, `Tester`); shown in tables and written to `team.md`. */
  role?: string;
  /** The model to ask for, when the preset pins one. */
  model?: string;
  /** The registered adapter to use, when not the run's default. */
  adapter?: string;
  /**
   * What the worker remembers: its squad `history.md`, bounded and newest
   * first (see `historyContext`); `fromPreset` puts it in its prompt after
   * the charter.
   */
  history?: string;
}

/** One row of a squad roster, worker or not. */
export interface RosterMember {
  /** The display name from the roster (markdown stripped). */
  name: string;
  /** The agent folder name: letters, digits and marks of any script in lower case, joined by `-` (`code-reviewer`, `李明`). */
  slug: string;
  /** The role column, or `''`. */
  role: string;
  /** The status column, when the roster has one. */
  status?: string;
  /** The charter file, relative to the squad folder, when one was found. */
  charterPath?: string;
  /** True for members that squad runs as infrastructure (Scribe, Ralph, the coordinator, `@` coding agents). */
  infrastructure: boolean;
}

/** A team described as data; `fromPreset` turns it into a runnable team. */
export interface TeamPreset {
  /** The team's name; presets merge by it. */
  name: string;
  /** One line on what the team is for. */
  description?: string;
  /** How the workers are run. */
  mode: TeamMode;
  /** The agents that do work. */
  workers: PresetWorker[];
  /** Context for planning (squad `routing.md`): who handles what. */
  routingContext?: string;
  /** Context every worker sees (squad `decisions.md`). */
  sharedContext?: string;
  /** The orchestrator's system prompt, for the orchestrator modes. */
  orchestratorPrompt?: string;
  /** Iteration limit of the orchestrator-reflect loop. */
  maxIterations?: number;
  /** Score (0-10) at which the orchestrator-reflect loop stops. */
  goalScore?: number;
  /** Where the preset comes from. */
  source: PresetSource;
  /** The file or folder it was read from, if any. */
  sourcePath?: string;
  /** Every roster row, for presets read from a squad folder. */
  roster?: RosterMember[];
  /** What was odd while reading it (missing charters, cut files). */
  warnings?: string[];
}

/** A preset read from a repository's squad folder: roster, path and warnings are always present. */
export interface SquadPreset extends TeamPreset {
  source: 'repo';
  sourcePath: string;
  roster: RosterMember[];
  warnings: string[];
}

/** A preset as a caller describes it; `source` is filled in where it is stored or merged. */
export type TeamPresetInput = Omit<TeamPreset, 'source'> & { source?: PresetSource };

const workerSchema = z.object({
  name: z.string().trim().min(1).max(200),
  systemPrompt: z.string(),
  role: z.string().max(200).optional(),
  model: z.string().min(1).optional(),
  adapter: z.string().min(1).optional(),
  history: z.string().optional(),
});

const rosterSchema = z.object({
  name: z.string(),
  slug: z.string().refine(isSlug, 'must be a folder name: letters, digits and marks of any script in lower case, joined by "-"'),
  role: z.string(),
  status: z.string().optional(),
  charterPath: z.string().optional(),
  infrastructure: z.boolean(),
});

/** The zod schema of a {@link TeamPreset} (`source` optional), used to validate presets loaded from JSON. */
export const teamPresetSchema = z.object({
  name: z.string().trim().min(1).max(200),
  description: z.string().optional(),
  mode: z.enum(TEAM_MODES).default(DEFAULT_TEAM_MODE),
  workers: z.array(workerSchema).min(1),
  routingContext: z.string().optional(),
  sharedContext: z.string().optional(),
  orchestratorPrompt: z.string().optional(),
  maxIterations: z.number().int().positive().optional(),
  goalScore: z.number().min(0).max(10).optional(),
  source: z.enum(['builtin', 'user', 'repo']).optional(),
  sourcePath: z.string().optional(),
  roster: z.array(rosterSchema).optional(),
  warnings: z.array(z.string()).optional(),
});

/** What {@link safeParseTeamPreset} returns. */
export type TeamPresetParseResult =
  | { success: true; data: TeamPreset }
  | { success: false; issues: { path: string; code: string; message: string }[] };

/** Validate a value as a preset without throwing; `source` is set to the given one when the value has none. */
export function safeParseTeamPreset(value: unknown, source: PresetSource): TeamPresetParseResult {
  const parsed = teamPresetSchema.safeParse(value);
  if (!parsed.success) {
    return {
      success: false,
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), code: i.code, message: i.message })),
    };
  }
  const data = stripUndefined({ ...parsed.data, source: parsed.data.source ?? source }) as TeamPreset;
  return { success: true, data };
}

/**
 * Validate a value as a preset; throws a {@link ParseError} listing every issue.
 *
 * @example
 * ```ts
 * const preset = parseTeamPreset(JSON.parse(text), 'user');
 * ```
 */
export function parseTeamPreset(value: unknown, source: PresetSource): TeamPreset {
  const result = safeParseTeamPreset(value, source);
  if (result.success) return result.data;
  throw new ParseError(`Invalid team preset: ${formatPresetIssues(result.issues)}`, { details: { issues: result.issues } });
}

/** The issues of a failed {@link safeParseTeamPreset} as one line: `path: message; ...`. */
export function formatPresetIssues(issues: readonly { path: string; message: string }[]): string {
  return issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ');
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
