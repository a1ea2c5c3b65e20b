/**
 * `fromPreset`: a team described as data becomes a runnable team, built with
 * `orchestrate`; `presetFromTeam` goes the other way for saving.
 * @module
 */
import type { ModelAdapter } from '../core/adapter.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { agent, type Agent, type AgentOptions } from '../patterns/agent.js';
import { orchestrate, orchestrateOptions, type OrchestrateOptions, type Orchestration } from '../patterns/orchestrate.js';
import { agentCheck } from '../patterns/checks.js';
import { check, defineOptions, nonEmptyString } from '../core/options.js';
import type { RunContext } from '../core/context.js';
import { resolveAdapter } from '../patterns/agent.js';
import { genericCharter } from './parse.js';
import { checkPresetModels } from './preset-models.js';
import { formatPresetIssues, safeParseTeamPreset, type PresetWorker, type TeamMode, type TeamPreset, type TeamPresetInput } from './preset.js';
import { defined } from '../core/defined.js';
import { rememberingTeam, type SquadHistoryOptions } from './memory.js';

/** A preset as {@link fromPreset} takes it: `mode` and `source` may be left out. */
export type FromPresetInput = Omit<TeamPresetInput, 'mode'> & { mode?: TeamMode };

/** Options of {@link fromPreset}; the orchestrate options not listed here pass through. */
export interface FromPresetOptions
  extends Omit<
    OrchestrateOptions,
    'name' | 'workers' | 'lead' | 'evaluator' | 'mode' | 'sharedContext' | 'routingContext' | 'maxIterations' | 'goalScore'
  > {
  /** The runnable's name. Default: the preset's name. */
  name?: string;
  /** The adapter (or the name of one registered with `run`) of every agent whose worker names none. Default: the run's adapter. */
  adapter?: ModelAdapter | string;
  /** Adapters by name for workers that name one (`worker.adapter`); when given, every such name must be in it. Without it, names resolve through `run(..., { adapters })`. */
  adapters?: Readonly<Record<string, ModelAdapter>>;
  /** The model of every agent whose worker names none. */
  model?: string;
  /** The lead's agent name (the lead plans, dispatches and synthesises). Default: `orchestrator`. */
  leadName?: string;
  /**
   * Scores each synthesis in `orchestrator-reflect` mode. Default: an agent
   * named `evaluator` when the preset sets `goalScore`, else none (the
   * orchestrator judges itself with sentinels). `false`: never an evaluator.
   */
  evaluator?: Agent | false;
  /**
   * After a run that completed, add what each worker did to its
   * `agents/<folder>/history.md` in the folder the preset was read from,
   * in the file's own dated style (written atomically; the oldest entries
   * move to `history-archive.md` once the file passes `maxBytes`, 12 KiB).
   * Only for presets read from a squad folder. Default: false.
   */
  history?: boolean | SquadHistoryOptions;
  /**
   * After a run that completed, record its decisions in the folder's
   * `decisions.md`, as squad's scribe does: each line of an answer that
   * starts with `DECISION:`, else the run's answer, as a dated entry
   * (`**By:**`, `**What:**`, `**Why:**`). Default: false.
   */
  scribe?: boolean;
}

const { name: _name, workers: _workers, lead: _lead, evaluator: _evaluator, mode: _mode, sharedContext: _shared, routingContext: _routing, maxIterations: _max, goalScore: _goal, ...passedThrough } =
  orchestrateOptions.shape;

/** The description {@link FromPresetOptions} are checked against: its own, and the orchestrate options it passes through. */
const fromPresetOptions = defineOptions<FromPresetOptions>('fromPreset', {
  ...passedThrough,
  name: nonEmptyString,
  adapter: check('a model adapter or an adapter name', (v) => typeof v === 'string' || typeof (v as ModelAdapter | null)?.openSession === 'function'),
  adapters: check('an object of adapters by name', (v) => typeof v === 'object' && v !== null && !Array.isArray(v)),
  model: nonEmptyString,
  leadName: check('a non-empty string', (v) => typeof v === 'string' && v.trim() !== ''),
  evaluator: (name, value) => void (value === false || agentCheck(name, value)),
  history: check('true, false or { maxBytes }', (v) => typeof v === 'boolean' || (typeof v === 'object' && v !== null && Object.keys(v).every((k) => k === 'maxBytes') && ((v as SquadHistoryOptions).maxBytes === undefined || (Number.isInteger((v as SquadHistoryOptions).maxBytes) && (v as SquadHistoryOptions).maxBytes! > 0)))),
  scribe: check('a boolean', (v) => typeof v === 'boolean'),
});

/** A team built by {@link fromPreset}: an orchestration that remembers its preset. */
export type PresetTeam = Orchestration & {
  /** The validated preset the team was built from. */
  readonly preset: TeamPreset;
};

/** The orchestrator's system prompt when the preset has none. */
export function defaultOrchestratorPrompt(preset: Pick<TeamPreset, 'name' | 'description'>): string {
  const what = preset.description ? ` (${preset.description})` : '';
  return `You are the orchestrator of the ${preset.name} team${what}. Split each request into tasks for the workers best suited to them, then combine their results into one answer.`;
}

/** The evaluator's system prompt for a preset with a goal score. */
export function defaultEvaluatorPrompt(preset: Pick<TeamPreset, 'name'>): string {
  return `You are the evaluator of the ${preset.name} team. Judge strictly how fully a response meets the request, and say what is missing.`;
}

/**
 * Build a runnable team from a preset with `orchestrate`: each worker becomes
 * an agent with the preset's prompt (and model and adapter, when given); the
 * routing context goes into the orchestrator's planning and the shared
 * context into every worker's prompt. The mode is the preset's
 * (`orchestrator-reflect` by default). The orchestrator modes get an
 * orchestrator agent (`orchestratorPrompt`, else a generic one); `broadcast`
 * and `sequential` get one only when the preset has an `orchestratorPrompt`,
 * to synthesise. `maxIterations` passes through and `goalScore` (0-10) becomes
 * orchestrate's 0-1 goal. When the team runs, a worker's model is checked
 * against its adapter's `listModels` (when the adapter can list models):
 * an unknown name falls back to `options.model`, else the adapter's
 * default, with a `warning` event (`unknown_model`).
 *
 * @example
 * ```ts
 * const team = await discoverSquad(process.cwd());
 * const result = await run(fromPreset(team!), 'Add a search box', { adapter });
 * console.log(result.summary);
 * ```
 */
export function fromPreset(preset: FromPresetInput, options: FromPresetOptions = {}): PresetTeam {
  const { history, scribe, ...rest } = options ?? {};
  const team = buildPresetTeam(preset, rest, true);
  if (!history && !scribe) return team;
  fromPresetOptions.check(options);
  const remembering = rememberingTeam(team, team.preset, { history: history === true ? {} : history || undefined, scribe: scribe === true });
  return Object.assign(remembering, { preset: team.preset }) as PresetTeam;
}

/** A worker's system prompt: its charter (or a generic one), then what it remembers of its history. */
function workerPrompt(w: PresetWorker, team: string): string {
  const charter = w.systemPrompt.trim() !== '' ? w.systemPrompt : genericCharter(w.name, w.role ?? '', team);
  return w.history === undefined ? charter : `${charter}\n\n## Your history (history.md, newest first)\n\n${w.history}`;
}

function buildPresetTeam(preset: FromPresetInput, options: FromPresetOptions, checkModels: boolean): PresetTeam {
  if (!preset || typeof preset !== 'object') throw new ConfigurationError(`Expected a team preset, got ${describeValue(preset)}`);
  if (!options || typeof options !== 'object') throw new ConfigurationError(`Expected fromPreset options to be an object, got ${describeValue(options)}`);
  fromPresetOptions.check(options);
  const parsed = safeParseTeamPreset(preset, preset.source ?? 'user');
  if (!parsed.success) {
    throw new ConfigurationError(`Invalid team preset: ${formatPresetIssues(parsed.issues)}`, { details: { issues: parsed.issues } });
  }
  const team = parsed.data;
  const {
    name, adapter: defaultAdapter, adapters, model, leadName = 'orchestrator', evaluator: evaluatorOption, ...rest
  } = options;

  const adapterOf = (choice: string | undefined, who: string): ModelAdapter | string | undefined => {
    if (choice === undefined) return defaultAdapter;
    if (adapters === undefined) return choice;
    const found = adapters[choice];
    if (found === undefined) {
      throw new ConfigurationError(`Worker "${who}" of preset "${team.name}" names adapter "${choice}", which is not in \`adapters\` (${Object.keys(adapters).join(', ') || 'none'})`, {
        code: 'unknown_adapter',
        details: { preset: team.name, worker: who, adapter: choice },
      });
    }
    return found;
  };
  const build = (agentName: string, system: string, extra: { description?: string; model?: string; adapter?: string } = {}): Agent => {
    const opts: AgentOptions = { name: agentName, system };
    if (extra.description) opts.description = extra.description;
    const m = extra.model ?? model;
    if (m !== undefined) opts.model = m;
    const a = adapterOf(extra.adapter, agentName);
    if (a !== undefined) opts.adapter = a;
    return agent(opts);
  };

  const workers = team.workers.map((w) =>
    build(w.name, workerPrompt(w, team.name), {
      ...defined({ description: w.role, model: w.model, adapter: w.adapter }),
    }),
  );
  if (workers.some((w) => w.name === leadName)) {
    throw new ConfigurationError(`Preset "${team.name}" has a worker named "${leadName}", the lead's name: pass another \`leadName\``);
  }
  const planned = team.mode === 'orchestrator' || team.mode === 'orchestrator-reflect';
  const lead = planned || team.orchestratorPrompt !== undefined
    ? build(leadName, team.orchestratorPrompt ?? defaultOrchestratorPrompt(team))
    : undefined;
  const evaluator =
    evaluatorOption === false ? undefined
    : evaluatorOption ?? (team.mode === 'orchestrator-reflect' && team.goalScore !== undefined ? build('evaluator', defaultEvaluatorPrompt(team)) : undefined);

  const loop = orchestrate({
    ...rest,
    name: name ?? team.name,
    mode: team.mode,
    workers,
    ...(lead ? { lead } : {}),
    ...(evaluator ? { evaluator } : {}),
    ...defined({ sharedContext: team.sharedContext, routingContext: team.routingContext, maxIterations: team.maxIterations }),
    ...(team.goalScore === undefined ? {} : { goalScore: team.goalScore / 10 }),
  });
  if (!checkModels || !team.workers.some((w) => w.model !== undefined)) return Object.assign(loop, { preset: team });
  return withCheckedModels(team, loop, (checked) => buildPresetTeam(checked, options, false), { adapterOf, model });
}

/**
 * A team whose workers name models, checked when it runs: each worker's
 * model against its adapter's `listModels` (adapters that cannot list are
 * trusted). An unknown name falls back to the configured default (`model`,
 * else the adapter's) with a `warning` event (`unknown_model`), and the run
 * goes to a team built from the corrected preset (one per set of
 * corrections, kept); the run's control pauses and cancels whichever runs.
 */
function withCheckedModels(
  team: TeamPreset,
  loop: Orchestration,
  rebuild: (preset: TeamPreset) => PresetTeam,
  how: { adapterOf: (choice: string | undefined, who: string) => ModelAdapter | string | undefined; model: string | undefined },
): PresetTeam {
  const variants = new Map<string, Orchestration>();
  const runChecked = async (input: string, ctx: RunContext) => {
    const adapter = (name: string | undefined): ModelAdapter | undefined => {
      try {
        return resolveAdapter(ctx, how.adapterOf(name, name ?? team.name), team.name);
      } catch {
        return undefined; // the agent's own session opening reports it
      }
    };
    const { preset, unknown } = await checkPresetModels(team, { adapter, ...defined({ model: how.model }), signal: ctx.signal });
    let target = loop;
    if (unknown.length > 0) {
      for (const u of unknown) {
        ctx.emit('warning', {
          message: `Preset "${team.name}": worker "${u.worker}" names model "${u.model}", which adapter "${u.adapter}" does not list (${u.listed} models); using ${u.fallback === undefined ? "the adapter's default" : `"${u.fallback}"`}`,
          code: 'unknown_model',
          data: u,
        });
      }
      const key = JSON.stringify(unknown.map((u) => [u.worker, u.fallback ?? null]));
      let variant = variants.get(key);
      if (!variant) variants.set(key, (variant = rebuild(preset)));
      target = variant;
    }
    return target.run(input, ctx);
  };
  return {
    name: loop.name,
    kind: loop.kind,
    preset: team,
    run: runChecked,
  };
}

/** A team given as the options it was built with: what {@link presetFromTeam} reads. */
export type OrchestratedTeamOptions = Pick<
  OrchestrateOptions,
  'workers' | 'lead' | 'mode' | 'sharedContext' | 'routingContext' | 'maxIterations' | 'goalScore'
> & {
  /** The team's name. */
  name: string;
  /** One line on what the team is for. */
  description?: string;
};

/** True for a team built by {@link fromPreset}. */
export function isPresetTeam(value: unknown): value is PresetTeam {
  return typeof value === 'object' && value !== null && typeof (value as { run?: unknown }).run === 'function' && 'preset' in value;
}

/** True for team options whose workers are agents (rather than a preset's worker descriptions). */
export function isOrchestratedTeamOptions(value: unknown): value is OrchestratedTeamOptions {
  const workers = (value as { workers?: unknown } | null)?.workers;
  return Array.isArray(workers) && workers.length > 0 && workers.every((w) => typeof (w as { converse?: unknown } | null)?.converse === 'function');
}

/**
 * The preset of a team: the preset a {@link fromPreset} team was built from,
 * or one read from orchestrate options (worker prompts, descriptions as
 * roles, models, adapters given by name; the orchestrator's prompt; a 0-1
 * `goalScore` as 0-10). Adapter objects, tools and evaluators are not data
 * and are left out.
 *
 * @example
 * ```ts
 * const preset = presetFromTeam({ name: 'pair', mode: 'sequential', workers: [coder, tester] });
 * ```
 */
export function presetFromTeam(team: PresetTeam | OrchestratedTeamOptions): TeamPresetInput {
  if (isPresetTeam(team)) return structuredClone(team.preset);
  if (!isOrchestratedTeamOptions(team)) throw new ConfigurationError(`Expected a team built by fromPreset or team options with agent workers, got ${describeValue(team)}`);
  const workers = team.workers.map((w): PresetWorker => {
    const o = w.options;
    const worker: PresetWorker = { name: w.name, systemPrompt: o.system ?? '' };
    if (o.description !== undefined) worker.role = o.description;
    if (o.model !== undefined) worker.model = o.model;
    if (typeof o.adapter === 'string') worker.adapter = o.adapter;
    return worker;
  });
  const preset: TeamPresetInput = { name: team.name, mode: team.mode ?? 'orchestrator-reflect', workers };
  if (team.description !== undefined) preset.description = team.description;
  if (team.sharedContext !== undefined) preset.sharedContext = team.sharedContext;
  if (team.routingContext !== undefined) preset.routingContext = team.routingContext;
  if (team.lead?.options.system !== undefined) preset.orchestratorPrompt = team.lead.options.system;
  if (team.maxIterations !== undefined) preset.maxIterations = team.maxIterations;
  if (team.goalScore !== undefined) preset.goalScore = Number((team.goalScore * 10).toFixed(6));
  return preset;
}
