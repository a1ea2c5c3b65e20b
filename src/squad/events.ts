/**
 * The events of squad teams that keep their memory in their folder
 * (`fromPreset(preset, { history, scribe })`), added to the run's event map
 * (see `TroupeLayerEvents` in `src/core/events.ts`).
 * @module
 */

/** The events of squad folders, by name. */
export interface SquadEvents {
  /**
   * After a run, what worker `worker` did was added to its
   * `agents/<folder>/history.md` (`path`, relative to the squad folder) as
   * the entry `heading`; `archived` older entries moved to
   * `history-archive.md` because the file passed its size.
   */
  'squad.history': { worker: string; path: string; heading: string; archived: number };
  /** After a run, the scribe added a decision to `decisions.md` as the entry `heading`. */
  'squad.decision': { path: string; heading: string };
}

declare global {
  interface TroupeLayerEvents extends SquadEvents {}
}
