/**
 * The team registry: the groups and members an application keeps between
 * restarts, as one versioned document in a {@link Store}.
 * @module
 */
import { z } from 'zod';
import { realClock, type Clock } from '../core/clock.js';
import { ConfigurationError, StoreError, describeValue, isTroupeError } from '../core/errors.js';
import { clock as clockCheck, defineOptions, nonEmptyString, string } from '../core/options.js';
import { orchestrateModes, type OrchestrateMode } from '../patterns/orchestrate-state.js';
import type { Store, StoreCallOptions } from '../core/store.js';

/** The version of the registry document written today. */
export const TEAM_REGISTRY_SCHEMA_VERSION = 3;

const reflectionSchema = z.object({
  enabled: z.boolean().default(true),
  maxIterations: z.number().int().positive().optional(),
  evaluatorPrompt: z.string().optional(),
});

const groupSchema = z.object({
  id: z.string().min(1),
  name: z.string(),
  mode: z.enum(['single', 'multi']).optional(),
  orchestration: z.enum(orchestrateModes).optional(),
  orchestratorPrompt: z.string().optional(),
  sharedContext: z.string().optional(),
  routingContext: z.string().optional(),
  worktree: z.string().optional(),
  reflection: reflectionSchema.optional(),
  sortOrder: z.number().optional(),
});

const memberSchema = z.object({
  name: z.string().min(1),
  groupId: z.string().min(1),
  role: z.enum(['orchestrator', 'worker']).default('worker'),
  preferredModel: z.string().optional(),
  systemPrompt: z.string().optional(),
});

const v3Schema = z.object({
  schemaVersion: z.literal(3),
  groups: z.array(groupSchema).default([]),
  members: z.array(memberSchema).default([]),
});

/** Version 2: no `orchestration` (a multi-agent group with reflection enabled ran the reflect loop). */
const v2Schema = z.object({
  schemaVersion: z.literal(2),
  groups: z.array(groupSchema.omit({ orchestration: true })).default([]),
  members: z.array(memberSchema).default([]),
});

/** Version 1: as version 2, with no `sortOrder` (the array order) and `orchestrator: true` instead of `role`. */
const v1Schema = z.object({
  schemaVersion: z.literal(1),
  groups: z.array(groupSchema.omit({ sortOrder: true, orchestration: true })).default([]),
  members: z.array(memberSchema.omit({ role: true }).extend({ orchestrator: z.boolean().optional() })).default([]),
});

/** A group of agents. */
export interface TeamGroup {
  id: string;
  name: string;
  /** `multi` for a multi-agent group (an orchestrator and workers); `single` otherwise. Default: `multi` when `orchestration` is set, else `single`. */
  mode: 'single' | 'multi';
  /**
   * How a multi-agent group's members work together: the `orchestrate`
   * mode (`broadcast`, `sequential`, `orchestrator`, `orchestrator-reflect`).
   * Absent when it was never chosen. A document of version 2 or older gets
   * `orchestrator-reflect` for a multi-agent group with reflection enabled.
   */
  orchestration?: OrchestrateMode;
  orchestratorPrompt?: string;
  sharedContext?: string;
  routingContext?: string;
  /** The worktree the group works in. */
  worktree?: string;
  reflection?: { enabled: boolean; maxIterations?: number; evaluatorPrompt?: string };
  /** Display order (ascending). Default: the position in the document. */
  sortOrder: number;
}

/** An agent's membership of a group. */
export interface TeamMember {
  name: string;
  groupId: string;
  /** Default: `worker`. */
  role: 'orchestrator' | 'worker';
  preferredModel?: string;
  systemPrompt?: string;
}

/** The registry's state. */
export interface TeamRegistryState {
  schemaVersion: typeof TEAM_REGISTRY_SCHEMA_VERSION;
  groups: TeamGroup[];
  members: TeamMember[];
}

/** A registry with no groups and no members. */
export function emptyTeamRegistry(): TeamRegistryState {
  return { schemaVersion: TEAM_REGISTRY_SCHEMA_VERSION, groups: [], members: [] };
}

/** What {@link safeParseTeamRegistry} returns. */
export type TeamRegistryParseResult =
  | { success: true; data: TeamRegistryState; migratedFrom?: number }
  | { success: false; error: string; newer?: boolean };

/**
 * Validate a registry document of any known version, migrate it to the
 * current one and fill defaults; never throws.
 */
export function safeParseTeamRegistry(raw: unknown): TeamRegistryParseResult {
  const version = (raw as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof version === 'number' && version > TEAM_REGISTRY_SCHEMA_VERSION) {
    return { success: false, newer: true, error: `schemaVersion ${version} is newer than this version of troupe reads (${TEAM_REGISTRY_SCHEMA_VERSION})` };
  }
  if (version === 1) {
    const v1 = v1Schema.safeParse(raw);
    if (!v1.success) return { success: false, error: z.prettifyError(v1.error) };
    const members = v1.data.members.map(({ orchestrator, ...m }) => ({ ...m, role: orchestrator ? ('orchestrator' as const) : ('worker' as const) }));
    return { success: true, migratedFrom: 1, data: finish({ groups: withOrchestration(v1.data.groups, members), members }) };
  }
  if (version === 2) {
    const v2 = v2Schema.safeParse(raw);
    if (!v2.success) return { success: false, error: z.prettifyError(v2.error) };
    return { success: true, migratedFrom: 2, data: finish({ groups: withOrchestration(v2.data.groups, v2.data.members), members: v2.data.members }) };
  }
  const v3 = v3Schema.safeParse(raw);
  if (!v3.success) return { success: false, error: z.prettifyError(v3.error) };
  return { success: true, data: finish(v3.data) };
}

type ParsedGroup = z.infer<typeof groupSchema>;

/**
 * Version 2 and older kept no orchestration mode; a multi-agent group with
 * reflection enabled ran the orchestrator-reflect loop, so it gets that mode.
 * Other groups get none (it was never chosen).
 */
function withOrchestration<G extends Omit<ParsedGroup, 'orchestration'>>(groups: G[], members: readonly TeamMember[]): Array<G & { orchestration?: OrchestrateMode }> {
  return groups.map((g) => {
    const multi = g.mode === 'multi' || members.some((m) => m.groupId === g.id && (m.role === 'orchestrator' || m.preferredModel !== undefined));
    return multi && g.reflection?.enabled === true ? { ...g, orchestration: 'orchestrator-reflect' } : g;
  });
}

/** {@link safeParseTeamRegistry} that throws a {@link StoreError}. */
export function parseTeamRegistry(raw: unknown): TeamRegistryState {
  const result = safeParseTeamRegistry(raw);
  if (!result.success) throw new StoreError(`Invalid team registry: ${result.error}`);
  return result.data;
}

function finish(doc: {
  groups: Array<Omit<TeamGroup, 'sortOrder' | 'mode'> & { sortOrder?: number | undefined; mode?: TeamGroup['mode'] | undefined }>;
  members: TeamMember[];
}): TeamRegistryState {
  return {
    schemaVersion: TEAM_REGISTRY_SCHEMA_VERSION,
    groups: doc.groups.map((g, i) => stripUndefined({ ...g, mode: g.mode ?? (g.orchestration === undefined ? 'single' : 'multi'), sortOrder: g.sortOrder ?? i })),
    members: doc.members.map((m) => stripUndefined(m)),
  };
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * True when group `groupId` is a multi-agent group: its mode is `multi`, it
 * has an `orchestration` mode, or one of its members is an orchestrator or
 * names a preferred model.
 */
export function isMultiAgentGroup(state: TeamRegistryState, groupId: string): boolean {
  const group = state.groups.find((g) => g.id === groupId);
  if (group?.mode === 'multi' || group?.orchestration !== undefined) return true;
  return state.members.some((m) => m.groupId === groupId && (m.role === 'orchestrator' || m.preferredModel !== undefined));
}

/** What {@link deleteGroup} did. */
export interface DeleteGroupResult {
  state: TeamRegistryState;
  /** Members removed with the group. */
  removed: TeamMember[];
  /** Members moved to another group. */
  moved: TeamMember[];
}

const deleteGroupOptions = defineOptions<{ moveTo?: string }>('deleteGroup', { moveTo: string });

/**
 * Delete group `groupId`. The members of a multi-agent group are removed
 * with it. The members of a single group are moved to `moveTo` (default:
 * the remaining single group with the lowest `sortOrder`); when there is no
 * such group they are removed too. Unknown ids are a `ConfigurationError`.
 */
export function deleteGroup(state: TeamRegistryState, groupId: string, options: { moveTo?: string } = {}): DeleteGroupResult {
  deleteGroupOptions.check(options);
  if (!state.groups.some((g) => g.id === groupId)) {
    throw new ConfigurationError(`Expected \`groupId\` to name a group, got ${describeValue(groupId)}`);
  }
  const multi = isMultiAgentGroup(state, groupId);
  const groups = state.groups.filter((g) => g.id !== groupId);
  const next: TeamRegistryState = { ...state, groups, members: [] };
  let target: string | undefined;
  if (!multi) {
    if (options.moveTo !== undefined && (options.moveTo === groupId || !groups.some((g) => g.id === options.moveTo))) {
      throw new ConfigurationError(`Expected \`moveTo\` to name another group, got ${describeValue(options.moveTo)}`);
    }
    target = options.moveTo ?? firstSingleGroup(next);
  }
  const removed: TeamMember[] = [];
  const moved: TeamMember[] = [];
  for (const m of state.members) {
    if (m.groupId !== groupId) next.members.push(m);
    else if (target === undefined) removed.push(m);
    else {
      const member = { ...m, groupId: target };
      next.members.push(member);
      moved.push(member);
    }
  }
  return { state: next, removed, moved };
}

function firstSingleGroup(state: TeamRegistryState): string | undefined {
  return [...state.groups].sort((a, b) => a.sortOrder - b.sortOrder).find((g) => !isMultiAgentGroup(state, g.id))?.id;
}

/** One agent that exists now, for {@link reconcile}. */
export interface ReconcileAgent {
  name: string;
  /** The group its definition asks for, if any. */
  group?: string;
}

/** One change {@link reconcile} made. */
export interface ReconcileChange {
  type: 'added' | 'moved' | 'removed';
  name: string;
  from?: string;
  to?: string;
}

/** What {@link reconcile} returns. */
export interface ReconcileResult {
  state: TeamRegistryState;
  changes: ReconcileChange[];
  /** Agents that could not be placed (there is no single group to add them to). */
  unplaced: string[];
}

const reconcileOptions = defineOptions<{ defaultGroup?: string }>('reconcile', { defaultGroup: string });

/**
 * Bring the registry in line with the agents that exist now. Precisely:
 *
 * 1. Members of multi-agent groups (see {@link isMultiAgentGroup}: mode
 *    `multi`, or a member with role `orchestrator` or a `preferredModel`)
 *    are never moved, added or removed. A member that is itself an
 *    orchestrator or names a preferred model is never touched either, even
 *    if its group is gone.
 * 2. Every other member is a "placement" of its agent in a single group.
 *    An agent not in `agents` loses its placements (`removed`).
 * 3. An agent in `agents` whose `group` names an existing single group is
 *    placed there: moved from its current placement (`moved`), or added as
 *    a worker (`added`).
 * 4. Otherwise an agent already placed in an existing group stays; an
 *    agent not placed (or placed in a group that no longer exists) goes to
 *    `defaultGroup` (default: the single group with the lowest
 *    `sortOrder`), or is listed in `unplaced` when there is none. An agent
 *    that is only a member of multi-agent groups and names no `group` is
 *    left as it is.
 * 5. An agent keeps at most one placement; extra placements are removed.
 *
 * Groups are never created or deleted. The input state is not modified.
 */
export function reconcile(state: TeamRegistryState, agents: readonly ReconcileAgent[], options: { defaultGroup?: string } = {}): ReconcileResult {
  reconcileOptions.check(options);
  const singles = new Set(state.groups.filter((g) => !isMultiAgentGroup(state, g.id)).map((g) => g.id));
  const pinned = (m: TeamMember) => isMultiAgentGroup(state, m.groupId) || m.role === 'orchestrator' || m.preferredModel !== undefined;
  const fallback = options.defaultGroup !== undefined && singles.has(options.defaultGroup) ? options.defaultGroup : firstSingleGroup(state);
  const wanted = new Map(agents.map((a) => [a.name, a]));
  const changes: ReconcileChange[] = [];
  const unplaced: string[] = [];
  const members: TeamMember[] = [];
  const placed = new Map<string, TeamMember>();
  for (const m of state.members) {
    if (pinned(m)) {
      members.push(m);
      continue;
    }
    const agent = wanted.get(m.name);
    if (!agent || placed.has(m.name)) {
      changes.push({ type: 'removed', name: m.name, from: m.groupId });
      continue;
    }
    const target = agent.group !== undefined && singles.has(agent.group) ? agent.group : singles.has(m.groupId) ? m.groupId : fallback;
    if (target === undefined) {
      changes.push({ type: 'removed', name: m.name, from: m.groupId });
      unplaced.push(m.name);
      continue;
    }
    const member = target === m.groupId ? m : { ...m, groupId: target };
    if (target !== m.groupId) changes.push({ type: 'moved', name: m.name, from: m.groupId, to: target });
    members.push(member);
    placed.set(m.name, member);
  }
  for (const agent of agents) {
    if (placed.has(agent.name) || unplaced.includes(agent.name)) continue;
    if (state.members.some((m) => m.name === agent.name && pinned(m)) && agent.group === undefined) continue;
    const target = agent.group !== undefined && singles.has(agent.group) ? agent.group : fallback;
    if (target === undefined) {
      unplaced.push(agent.name);
      continue;
    }
    const member: TeamMember = { name: agent.name, groupId: target, role: 'worker' };
    members.push(member);
    placed.set(agent.name, member);
    changes.push({ type: 'added', name: agent.name, to: target });
  }
  return { state: { ...state, members }, changes, unplaced };
}

/** Options of {@link teamRegistry}. */
export interface TeamRegistryOptions {
  /** The document key. Default: `team-registry`. */
  key?: string;
  /** Stamps the name of a corrupted document moved aside. Default: the real clock. */
  clock?: Clock;
}

const teamRegistryOptions = defineOptions<TeamRegistryOptions>('teamRegistry', { key: nonEmptyString, clock: clockCheck });

/** What {@link TeamRegistry.load} returns. */
export interface LoadedTeamRegistry {
  state: TeamRegistryState;
  /** False when there was no document (the state is then empty). */
  found: boolean;
  /** The version the document was migrated from, when it was older. */
  migratedFrom?: number;
  /** Set when the document was corrupted: where it was moved and why. The state is then empty. */
  corrupt?: { movedTo: string; reason: string };
}

/** Loads and saves the registry document. */
export interface TeamRegistry {
  /** The document key. */
  readonly key: string;
  /**
   * Load the registry, migrating older versions and filling defaults. A
   * corrupted document (not JSON, or not a registry) is moved aside to
   * `<key>.corrupt-<clock time>` as `{ reason, content }` and reported in
   * `corrupt`; it is never silently replaced. A document written by a newer
   * version is a `StoreError` and is left alone.
   */
  load(options?: StoreCallOptions): Promise<LoadedTeamRegistry>;
  /** Validate and save the registry atomically. */
  save(state: TeamRegistryState, options?: StoreCallOptions): Promise<void>;
}

/**
 * The team registry in `store`.
 *
 * @example
 * ```ts
 * const registry = teamRegistry(fileStore('.troupe'));
 * const { state, corrupt } = await registry.load();
 * if (corrupt) console.warn(`registry was corrupted, kept in ${corrupt.movedTo}`);
 * ```
 */
export function teamRegistry(store: Store, options: TeamRegistryOptions = {}): TeamRegistry {
  teamRegistryOptions.check(options);
  const key = options.key ?? 'team-registry';
  const clock = options.clock ?? realClock;
  const moveAside = async (content: unknown, reason: string, call: StoreCallOptions): Promise<LoadedTeamRegistry> => {
    const movedTo = `${key}.corrupt-${clock.now()}`;
    await store.set(movedTo, { reason, content }, call);
    await store.delete(key, call);
    return { state: emptyTeamRegistry(), found: true, corrupt: { movedTo, reason } };
  };
  return {
    key,
    async load(call = {}) {
      let raw: unknown;
      try {
        raw = await store.get(key, call);
      } catch (error) {
        if (isTroupeError(error, 'store_error') && error.details.corrupt === true) return moveAside(error.details.raw, error.message, call);
        throw error;
      }
      if (raw === undefined) return { state: emptyTeamRegistry(), found: false };
      const parsed = safeParseTeamRegistry(raw);
      if (parsed.success) return { state: parsed.data, found: true, ...(parsed.migratedFrom ? { migratedFrom: parsed.migratedFrom } : {}) };
      if (parsed.newer) throw new StoreError(`Team registry "${key}": ${parsed.error}`, { details: { key } });
      return moveAside(raw, `Team registry "${key}" is invalid: ${parsed.error}`, call);
    },
    async save(state, call = {}) {
      await store.set(key, parseTeamRegistry(state), call);
    },
  };
}
