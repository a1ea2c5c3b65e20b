/**
 * `troupe/squad`: squad team folders (`.squad/`) and team presets — read a
 * folder into a preset, write a preset back, build a team from a preset,
 * and keep user presets in a store.
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
