// Recipes of troupe/agents' and troupe/squad's functions (see ./types.ts).
// Each checks its options before it reads a file.
import { compileAgents } from '../../../src/agents/compile.js';
import { defineAgent } from '../../../src/agents/define.js';
import { reopenDoubledFence, splitFrontMatter } from '../../../src/agents/front-matter.js';
import { inspectAgents } from '../../../src/agents/inspect.js';
import { loadAgentFolder, loadAgents } from '../../../src/agents/load.js';
import { resolveAgentMcpServers } from '../../../src/agents/mcp-servers.js';
import { parseAgentFile, safeParseAgentFile } from '../../../src/agents/parse.js';
import { resolveAgentModel, resolveAgentTools, runsOnCli } from '../../../src/agents/resolve.js';
import { validateAgents } from '../../../src/agents/validate.js';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { memoryStore } from '../../../src/core/memory-store.js';
import { findSquadDir } from '../../../src/squad/find.js';
import { fromPreset } from '../../../src/squad/from-preset.js';
import { discoverSquad, parseSquad } from '../../../src/squad/parse.js';
import type { TeamPreset } from '../../../src/squad/preset.js';
import { checkPresetModels } from '../../../src/squad/preset-models.js';
import { loadUserPresets, saveTeamAsPreset } from '../../../src/squad/presets.js';
import { writeSquad } from '../../../src/squad/write.js';
import { recordDecision, recordHistoryEntry } from '../../../src/squad/memory.js';
import type { Recipes } from './types.js';

const helper = () => defineAgent({ name: 'helper', system: 'You help.' });
const never = '/tmp/troupe-recipe-never-read';
const file = '---\nname: helper\n---\nYou help.';
const preset: TeamPreset = { name: 'pair', mode: 'sequential', source: 'user', workers: [{ name: 'writer', systemPrompt: 'You write.' }, { name: 'editor', systemPrompt: 'You edit.' }] };

export const agentsRecipes: Recipes = {
  // troupe/agents
  parseAgentFile: (extra) => parseAgentFile(file, { ...extra }),
  safeParseAgentFile: (extra) => safeParseAgentFile(file, { ...extra }),
  splitFrontMatter: (extra) => splitFrontMatter(file, { ...extra }),
  reopenDoubledFence: (extra) => reopenDoubledFence({ present: true, language: '', matter: '', body: 'name: helper\n---\nYou help.' }, { ...extra }),
  loadAgents: (extra) => loadAgents(never, { ...extra }),
  loadAgentFolder: (extra) => loadAgentFolder(never, { ...extra }),
  validateAgents: (extra) => validateAgents([helper()], { ...extra }),
  inspectAgents: (extra) => inspectAgents([helper()], { ...extra }),
  compileAgents: (extra) => compileAgents([helper()], { ...extra }),
  resolveAgentTools: (extra) => resolveAgentTools(helper(), { ...extra }),
  resolveAgentModel: (extra) => resolveAgentModel(helper(), { ...extra }),
  resolveAgentMcpServers: (extra) => resolveAgentMcpServers(helper(), { ...extra }),
  runsOnCli: (extra) => runsOnCli(helper(), { ...extra }),
  // troupe/squad (each refuses before it touches the file system or the store)
  findSquadDir: (extra) => findSquadDir(never, { ...extra }),
  parseSquad: (extra) => parseSquad(never, { ...extra }),
  discoverSquad: (extra) => discoverSquad(never, { ...extra }),
  writeSquad: (extra) => writeSquad(never, preset, { ...extra }),
  fromPreset: (extra) => fromPreset(preset, { ...extra }),
  checkPresetModels: (extra) => checkPresetModels(preset, { adapter: scriptedAdapter(), ...extra }),
  loadUserPresets: (extra) => loadUserPresets(memoryStore(), { ...extra }),
  saveTeamAsPreset: (extra) => saveTeamAsPreset(preset, { store: memoryStore(), ...extra }),
  recordHistoryEntry: (extra) => recordHistoryEntry(never, 'writer', { title: 'x', at: 0, fields: [] }, { ...extra }),
  recordDecision: (extra) => recordDecision(never, { title: 'x', at: 0, fields: [] }, { ...extra }),
};
