/**
 * Checking a preset's model names against what its adapters can run: a
 * worker that names a model its adapter does not list falls back to the
 * configured default model (or the adapter's own default), and says so.
 * Adapters that cannot list their models (no `listModels`) are trusted.
 * @module
 */
import type { ModelAdapter } from '../core/adapter.js';
import { throwIfAborted } from '../core/abort.js';
import { abortSignal, check, defineOptions, required, string } from '../core/options.js';
import type { TeamPreset } from './preset.js';

/** A worker whose model its adapter does not list, and what it gets instead. */
export interface UnknownPresetModel {
  /** The worker's name. */
  worker: string;
  /** The model the preset names. */
  model: string;
  /** The adapter's id. */
  adapter: string;
  /** The model used instead; absent: the adapter's default. */
  fallback?: string;
  /** How many models the adapter lists. */
  listed: number;
}

/** Options of {@link checkPresetModels}. */
export interface CheckPresetModelsOptions {
  /** The adapter of a worker that names none, or a function from a worker's `adapter` name (or undefined) to its adapter (undefined: not checked). */
  adapter: ModelAdapter | ((name: string | undefined) => ModelAdapter | undefined);
  /** The configured default model: what a worker with an unknown model falls back to. Default: the adapter's default. */
  model?: string;
  /** Cancels the listing. */
  signal?: AbortSignal;
}

const checkPresetModelsOptions = defineOptions<CheckPresetModelsOptions>('checkPresetModels', {
  adapter: required(check('a model adapter or a function of an adapter name', (v) => typeof v === 'function' || typeof (v as ModelAdapter | null)?.openSession === 'function')),
  model: string,
  signal: abortSignal,
});

/** What {@link checkPresetModels} returns: the preset with unknown models replaced, and which they were. */
export interface CheckedPresetModels {
  preset: TeamPreset;
  unknown: UnknownPresetModel[];
}

/**
 * Check every worker's `model` against its adapter's `listModels` (once
 * per adapter). A name the adapter does not list is replaced by `model`,
 * the configured default, or removed when there is none (the adapter's
 * default).
 *
 * @example
 * ```ts
 * const { preset: checked, unknown } = await checkPresetModels(preset, { adapter, model: 'gpt-4.1-mini' });
 * for (const u of unknown) console.warn(`${u.worker}: no model ${u.model}, using ${u.fallback ?? 'the default'}`);
 * ```
 */
export async function checkPresetModels(preset: TeamPreset, options: CheckPresetModelsOptions): Promise<CheckedPresetModels> {
  checkPresetModelsOptions.check(options);
  const adapterOf = typeof options.adapter === 'function' ? options.adapter : (name: string | undefined) => (name === undefined ? (options.adapter as ModelAdapter) : undefined);
  const lists = new Map<ModelAdapter, Promise<ReadonlySet<string>>>();
  const unknown: UnknownPresetModel[] = [];
  const workers = [];
  for (const worker of preset.workers) {
    throwIfAborted(options.signal);
    const adapter = worker.model === undefined ? undefined : adapterOf(worker.adapter);
    if (worker.model === undefined || adapter?.listModels === undefined) {
      workers.push(worker);
      continue;
    }
    let list = lists.get(adapter);
    if (!list) lists.set(adapter, (list = adapter.listModels(options.signal ? { signal: options.signal } : {}).then((names) => new Set(names))));
    const known = await list;
    if (known.has(worker.model)) {
      workers.push(worker);
      continue;
    }
    const fallback = options.model;
    unknown.push({ worker: worker.name, model: worker.model, adapter: adapter.id, listed: known.size, ...(fallback === undefined ? {} : { fallback }) });
    const { model: _model, ...rest } = worker;
    workers.push(fallback === undefined ? rest : { ...rest, model: fallback });
  }
  return { preset: unknown.length === 0 ? preset : { ...preset, workers }, unknown };
}
