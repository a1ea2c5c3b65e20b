/**
 * Presets in three tiers: built into troupe, saved by the user in a store,
 * and defined by a repository's squad folder. A repository preset overrides
 * a user preset of the same name, which overrides a built-in one.
 * @module
 */
import { throwIfAborted } from '../core/abort.js';
import { ConfigurationError, ParseError } from '../core/errors.js';
import { abortSignal, defineOptions, string } from '../core/options.js';
import type { Store } from '../core/store.js';
import { isPresetTeam, isOrchestratedTeamOptions, presetFromTeam, type PresetTeam, type OrchestratedTeamOptions } from './from-preset.js';
import { formatPresetIssues, safeParseTeamPreset, type PresetSource, type TeamPreset, type TeamPresetInput } from './preset.js';
import { squadSlug } from './slug.js';
import { writeSquad } from './write.js';

/** The store key prefix of user presets: `presets/<slug>`. */
export const PRESET_KEY_PREFIX = 'presets/';

/** The schema version of a stored user preset document. */
export const PRESET_DOCUMENT_VERSION = 1;

const BUILT_IN: readonly Omit<TeamPreset, 'source'>[] = [
  {
    name: 'code-review',
    description: 'Three reviewers read the same change in parallel, each from one angle.',
    mode: 'broadcast',
    workers: [
      {
        name: 'correctness-reviewer',
        role: 'Correctness reviewer',
        systemPrompt:
          'You are a correctness reviewer. Read the change for bugs: wrong logic, unhandled edge cases, off-by-one errors, broken error handling, race conditions. For each finding give the location, what goes wrong, and a fix. Say plainly when you find nothing.',
      },
      {
        name: 'security-reviewer',
        role: 'Security reviewer',
        systemPrompt:
          'You are a security reviewer. Look for injection, missing authorisation, secrets in code, unsafe deserialisation, path traversal and unvalidated input. Rate each finding Critical, High, Medium or Low and propose a fix.',
      },
      {
        name: 'maintainability-reviewer',
        role: 'Maintainability reviewer',
        systemPrompt:
          'You are a maintainability reviewer. Judge naming, structure, duplication, tests and documentation. Keep to changes that make the code easier to read or change; skip matters of taste.',
      },
    ],
  },
  {
    name: 'implement-and-challenge',
    description: 'An implementer builds, a challenger attacks the result, and the loop repeats until the work holds up.',
    mode: 'orchestrator-reflect',
    maxIterations: 3,
    goalScore: 8,
    workers: [
      {
        name: 'implementer',
        role: 'Implementer',
        systemPrompt:
          'You are the implementer. Build what is asked, completely and simply. When a challenger has raised objections, address each one: fix it or explain why it does not apply.',
      },
      {
        name: 'challenger',
        role: 'Challenger',
        systemPrompt:
          'You are the challenger. Try to break the latest implementation: find failing inputs, missed requirements and weak assumptions. Be specific and concrete; rank your objections by how much they matter.',
      },
    ],
  },
  {
    name: 'research-and-summarise',
    description: 'A researcher gathers, a fact-checker verifies, a writer summarises, one after another.',
    mode: 'sequential',
    workers: [
      {
        name: 'researcher',
        role: 'Researcher',
        systemPrompt:
          'You are a researcher. Gather the facts, sources and open questions that bear on the request. List them with where each comes from; do not summarise yet.',
      },
      {
        name: 'fact-checker',
        role: 'Fact-checker',
        systemPrompt:
          'You are a fact-checker. Go through the research you are given, mark each claim as supported, doubtful or wrong, and say why. Drop nothing silently.',
      },
      {
        name: 'summariser',
        role: 'Summariser',
        systemPrompt:
          'You are a summariser. Write a short, accurate summary of the checked research for a busy reader: the answer first, then the evidence, then what remains uncertain.',
      },
    ],
  },
  {
    name: 'bug-hunt',
    description: 'An orchestrator plans a bug investigation across a reproducer, an investigator and a fixer.',
    mode: 'orchestrator',
    workers: [
      {
        name: 'reproducer',
        role: 'Reproducer',
        systemPrompt:
          'You are the reproducer. Turn the bug report into the smallest reliable reproduction: steps, input, expected and actual result.',
      },
      {
        name: 'investigator',
        role: 'Investigator',
        systemPrompt:
          'You are the investigator. From the reproduction, find the root cause: the exact code path and the assumption that fails. Separate evidence from guesses.',
      },
      {
        name: 'fixer',
        role: 'Fixer',
        systemPrompt:
          'You are the fixer. Propose the smallest change that removes the root cause, with a test that fails before and passes after.',
      },
    ],
  },
];

/**
 * The presets that come with troupe (`code-review`, `implement-and-challenge`,
 * `research-and-summarise`, `bug-hunt`), as fresh copies.
 */
export function builtInPresets(): TeamPreset[] {
  return BUILT_IN.map((preset) => ({ ...structuredClone(preset), source: 'builtin' as const }));
}

/** The key presets merge by: the kebab-case slug of the name (`Code Review` and `code-review` are one preset). */
export function presetKey(name: string): string {
  return squadSlug(name);
}

/**
 * Merge three tiers of presets by name: repository over user over built-in.
 * Each result carries the `source` of the tier it came from; the order is
 * that of first appearance.
 *
 * @example
 * ```ts
 * const repo = await discoverSquad(root);
 * const all = mergePresets(builtInPresets(), await loadUserPresets(store), repo ? [repo] : []);
 * ```
 */
export function mergePresets(
  builtIn: readonly TeamPreset[],
  user: readonly TeamPreset[],
  repo: readonly TeamPreset[],
): TeamPreset[] {
  const merged = new Map<string, TeamPreset>();
  const tiers: [readonly TeamPreset[], PresetSource][] = [
    [builtIn, 'builtin'],
    [user, 'user'],
    [repo, 'repo'],
  ];
  for (const [presets, source] of tiers) {
    for (const preset of presets) merged.set(presetKey(preset.name), { ...preset, source });
  }
  return [...merged.values()];
}

/** Options of {@link loadUserPresets}. */
export interface LoadUserPresetsOptions {
  /** Cancels the loading. */
  signal?: AbortSignal;
}

const loadUserPresetsOptions = defineOptions<LoadUserPresetsOptions>('loadUserPresets', { signal: abortSignal });

/**
 * The user presets saved in `store` (under `presets/`), validated, each with
 * `source: 'user'`. A stored document that is not a valid preset throws a
 * `ParseError` naming its key.
 */
export async function loadUserPresets(store: Store, options: LoadUserPresetsOptions = {}): Promise<TeamPreset[]> {
  const { signal } = loadUserPresetsOptions.check(options);
  const presets: TeamPreset[] = [];
  for (const key of await store.list(PRESET_KEY_PREFIX, signal ? { signal } : {})) {
    throwIfAborted(signal);
    const doc = await store.get(key, signal ? { signal } : {});
    if (doc === undefined) continue;
    const wrapped = typeof doc === 'object' && doc !== null && 'preset' in doc ? (doc as { version?: unknown; preset: unknown }) : undefined;
    if (wrapped && typeof wrapped.version === 'number' && wrapped.version > PRESET_DOCUMENT_VERSION) {
      throw new ParseError(`Stored preset ${key} has schema version ${wrapped.version}; this troupe reads up to ${PRESET_DOCUMENT_VERSION}`, {
        details: { key, version: wrapped.version },
      });
    }
    const value = wrapped ? wrapped.preset : doc;
    const parsed = safeParseTeamPreset(value, 'user');
    if (!parsed.success) {
      throw new ParseError(`Stored preset ${key} is invalid: ${formatPresetIssues(parsed.issues)}`, { details: { key, issues: parsed.issues } });
    }
    presets.push({ ...parsed.data, source: 'user' });
  }
  return presets;
}

/** Options of {@link saveTeamAsPreset}. */
export interface SaveTeamAsPresetOptions {
  /** Where user presets live. */
  store: Store;
  /** A repository root: the team is also written there as a squad folder. */
  repoRoot?: string;
  /** Cancels the saving. */
  signal?: AbortSignal;
}

const saveTeamAsPresetOptions = defineOptions<SaveTeamAsPresetOptions>('saveTeamAsPreset', {
  store: (_name, value) => {
    if (typeof (value as Store | undefined)?.set !== 'function') throw new ConfigurationError('Expected `store` to be a Store with get, set and list');
  },
  repoRoot: string,
  signal: abortSignal,
});

/** What {@link saveTeamAsPreset} returns. */
export interface SavedPreset {
  /** The preset as stored, with `source: 'user'`. */
  preset: TeamPreset;
  /** Its store key. */
  key: string;
  /** The squad folder written, when `repoRoot` was given. */
  squadDir?: string;
}

/**
 * Save a team as a user preset (JSON in the store, under `presets/<slug>`)
 * and, given `repoRoot`, write it as that repository's squad folder too.
 * The team is a preset, a team built by `fromPreset` (its preset is saved),
 * or orchestrate options with a `name` (read with `presetFromTeam`).
 *
 * @example
 * ```ts
 * await saveTeamAsPreset(fromPreset(preset), { store, repoRoot: '/repo' });
 * ```
 */
export async function saveTeamAsPreset(team: TeamPresetInput | PresetTeam | OrchestratedTeamOptions, options: SaveTeamAsPresetOptions): Promise<SavedPreset> {
  const { store, repoRoot, signal } = saveTeamAsPresetOptions.check(options ?? ({} as SaveTeamAsPresetOptions));
  const input: TeamPresetInput = isPresetTeam(team) || isOrchestratedTeamOptions(team) ? presetFromTeam(team) : team;
  const { sourcePath: _path, roster: _roster, warnings: _warnings, ...rest } = input;
  const parsed = safeParseTeamPreset({ ...rest, source: 'user' }, 'user');
  if (!parsed.success) {
    throw new ConfigurationError(`Invalid team preset: ${formatPresetIssues(parsed.issues)}`, { details: { issues: parsed.issues } });
  }
  const preset = parsed.data;
  const slug = presetKey(preset.name);
  if (slug === '') throw new ConfigurationError(`Preset name ${JSON.stringify(preset.name)} has no letter or digit to key it by`);
  const key = `${PRESET_KEY_PREFIX}${slug}`;
  throwIfAborted(signal);
  await store.set(key, { version: PRESET_DOCUMENT_VERSION, preset }, signal ? { signal } : {});
  if (repoRoot === undefined) return { preset, key };
  const squadDir = await writeSquad(repoRoot, input, signal ? { signal } : {});
  return { preset, key, squadDir };
}
