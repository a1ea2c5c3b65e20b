/**
 * `troupe/squad`: squad team folders (`.squad/`) and team presets — read a
 * folder into a preset, write a preset back, build a team from a preset,
 * keep user presets in a store, and keep a team's memory in its folder
 * (each agent's `history.md`, the scribe's `decisions.md`).
 * @module troupe/squad
 * @category Definitions
 */
export {
  DEFAULT_TEAM_MODE,
  TEAM_MODES,
  formatPresetIssues,
  parseTeamPreset,
  safeParseTeamPreset,
  teamPresetSchema,
  type PresetSource,
  type PresetWorker,
  type RosterMember,
  type SquadPreset,
  type TeamMode,
  type TeamPreset,
  type TeamPresetInput,
  type TeamPresetParseResult,
} from './preset.js';
export { SQUAD_DIR_NAMES, findSquadDir, type FindSquadDirOptions } from './find.js';
export { DEFAULT_TEAM_NAME, MAX_ROSTER, parseTeamMd, type RosterForm, type TeamMd, type TeamMdMember } from './team-md.js';
export { SLUG_PATTERN, displayName, isSlug } from './slug.js';
export { headingDate } from './caps.js';
export { discoverSquad, parseSquad, type ParseSquadOptions } from './parse.js';
export { writeSquad, type WriteSquadOptions } from './write.js';
export {
  builtInPresets,
  loadUserPresets,
  mergePresets,
  saveTeamAsPreset,
  type LoadUserPresetsOptions,
  type SavedPreset,
  type SaveTeamAsPresetOptions,
} from './presets.js';
export {
  defaultEvaluatorPrompt,
  defaultOrchestratorPrompt,
  fromPreset,
  isPresetTeam,
  presetFromTeam,
  type FromPresetInput,
  type FromPresetOptions,
  type OrchestratedTeamOptions,
  type PresetTeam,
} from './from-preset.js';
export { checkPresetModels, type CheckedPresetModels, type CheckPresetModelsOptions, type UnknownPresetModel } from './preset-models.js';
export {
  HISTORY_CAP,
  HISTORY_MAX_BYTES,
  addDecisionEntry,
  addHistoryEntry,
  archiveHistory,
  historyContext,
  parseHistory,
  type ArchivedHistory,
  type HistoryBlock,
  type HistoryContext,
  type NewEntry,
  type ParsedHistory,
} from './history.js';
export { recordDecision, recordHistoryEntry, type RecordDecisionOptions, type RecordHistoryOptions, type SquadHistoryOptions } from './memory.js';
export type { SquadEvents } from './events.js';
