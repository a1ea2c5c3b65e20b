/**
 * The error of a merge that conflicted: which paths, and which earlier
 * changes (of other chunks or tasks) they conflicted with, so that the
 * worker's next attempt can be told and the conflict reported.
 * @module
 */
import { defined } from '../core/defined.js';
import { TroupeError } from '../core/errors.js';

/** An earlier change a merge conflicted with. */
export interface ConflictingChange {
  /** Who made it: a plan chunk's sequence index as text, or a task id. */
  id: string;
  /** Its title. */
  title: string;
  /** The conflicting paths it changed. */
  paths: string[];
  /** Its change of those paths, as a unified diff, when known. */
  patch?: string;
}

/** Merging a workspace back conflicted (code `merge_conflict`): the work was not merged. */
export class MergeConflictError extends TroupeError {
  /** The conflicting paths. */
  readonly paths: string[];
  /** The earlier changes it conflicted with, when known. */
  readonly conflictsWith: ConflictingChange[];
  constructor(message: string, paths: string[], conflictsWith: ConflictingChange[] = []) {
    super('merge_conflict', message, { details: { paths, conflictsWith: conflictsWith.map((c) => ({ id: c.id, title: c.title, paths: c.paths })) } });
    this.paths = paths;
    this.conflictsWith = conflictsWith;
  }
}

/**
 * Who changed each path last, for telling a conflicting worker what it
 * conflicts with: a strategy-independent record the plan executor and the
 * coordination keep as merges land.
 */
export class MergedChanges {
  readonly #last = new Map<string, { id: string; title: string; patch?: string }>();

  /** `id` merged these changes. */
  merged(id: string, title: string, files: ReadonlyArray<{ path: string; patch?: string }>): void {
    for (const f of files) this.#last.set(f.path, { id, title, ...defined({ patch: f.patch }) });
  }

  /** The earlier changes of `paths`, grouped by who made them (paths nobody here changed are left out). */
  conflictsWith(paths: readonly string[]): ConflictingChange[] {
    const by = new Map<string, ConflictingChange>();
    for (const path of paths) {
      const last = this.#last.get(path);
      if (!last) continue;
      let change = by.get(last.id);
      if (!change) by.set(last.id, (change = { id: last.id, title: last.title, paths: [] }));
      change.paths.push(path);
      if (last.patch !== undefined) change.patch = change.patch === undefined ? last.patch : `${change.patch}\n${last.patch}`;
    }
    return [...by.values()];
  }
}
