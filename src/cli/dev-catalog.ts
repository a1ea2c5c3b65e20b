/**
 * What `troupe dev` offers from a folder: its agents and teams (agent
 * files of any format), its plan templates (template files in the folder
 * or its `templates/`, and the store's registry), and squad presets in
 * three sections — the folder's squad team, the built-in presets, the
 * user's own (from the store). Read once when the server starts.
 * @module
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { loadAgentFolder } from '../agents/load.js';
import type { AgentDefinition, AgentIssue } from '../agents/definition.js';
import { validateAgents } from '../agents/validate.js';
import { defined } from '../core/defined.js';
import { errorMessage } from '../core/errors.js';
import type { Store } from '../core/store.js';
import { checkPlanTemplate, parsePlanTemplateText, type PlanTemplate } from '../plan/templates/template.js';
import { templateRegistry } from '../plan/templates/registry.js';
import { discoverSquad } from '../squad/parse.js';
import type { SquadPreset, TeamPreset } from '../squad/preset.js';
import { builtInPresets, loadUserPresets } from '../squad/presets.js';
import type { CatalogEntry } from '../ui/types.js';

/** The folder's catalogue, with what starts each entry. */
export interface DevCatalog {
  folder: string;
  /** Agent definitions that validate (empty when the folder's agent graph has errors). */
  agents: AgentDefinition[];
  templates: Map<string, PlanTemplate>;
  squads: { repo: SquadPreset | null; builtin: TeamPreset[]; user: TeamPreset[] };
  /** Problems found reading the folder, one line each. */
  problems: string[];
  /** The warnings of the agent files (tools and models that resolve to nothing, keys not used, ...). */
  warnings: AgentIssue[];
}

/** Read a folder's catalogue; problems are collected, not thrown. */
export async function readCatalog(
  folder: string,
  options: { store?: Store | undefined; userStore?: Store | undefined; signal?: AbortSignal | undefined; toolAliases?: Record<string, string | null> | undefined } = {},
): Promise<DevCatalog> {
  const problems: string[] = [];
  const call = defined({ signal: options.signal });
  let agents: AgentDefinition[] = [];
  let warnings: AgentIssue[] = [];
  try {
    const loaded = await loadAgentFolder(folder, call);
    const validation = validateAgents(loaded.agents, { unknownTools: 'warn', ...defined({ toolAliases: options.toolAliases }) });
    const { errors } = validation;
    warnings = [...loaded.warnings, ...validation.warnings];
    if (errors.length > 0) problems.push(...errors.map((e) => `agents: ${e.message}`));
    else agents = loaded.agents;
  } catch (error) {
    problems.push(`agents: ${errorMessage(error)}`);
  }
  const templates = await readTemplates(folder, options.store, problems);
  let repo: SquadPreset | null = null;
  try {
    repo = await discoverSquad(folder, call);
  } catch (error) {
    problems.push(`squad: ${errorMessage(error)}`);
  }
  const user = options.userStore ? await loadUserPresets(options.userStore, call).catch((error: unknown) => (problems.push(`presets: ${errorMessage(error)}`), [])) : [];
  return { folder, agents, templates, squads: { repo, builtin: builtInPresets(), user }, problems, warnings };
}

async function readTemplates(folder: string, store: Store | undefined, problems: string[]): Promise<Map<string, PlanTemplate>> {
  const found = new Map<string, PlanTemplate>();
  for (const dir of [folder, join(folder, 'templates')]) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names.sort()) {
      if (!name.endsWith('.yaml') && !name.endsWith('.yml') && !name.endsWith('.json')) continue;
      const file = join(dir, name);
      if (!(await stat(file).then((s) => s.isFile(), () => false))) continue;
      let value: unknown;
      try {
        value = parsePlanTemplateText(await readFile(file, 'utf8'), file);
      } catch {
        continue; // not YAML or JSON: not a template
      }
      if (!value || typeof value !== 'object' || !('parameters' in value || 'chunks' in value)) continue;
      const check = checkPlanTemplate(value);
      if (check.valid) found.set(check.template.name, check.template);
      else problems.push(`template ${relative(folder, file)}: ${check.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
    }
  }
  if (store) {
    const registry = templateRegistry(store);
    for (const name of await registry.list().catch(() => [] as string[])) {
      if (found.has(name)) continue;
      const template = await registry.get(name).catch(() => undefined);
      if (template) found.set(name, template);
    }
  }
  return found;
}

/** The catalogue as the team picker shows it. */
export function catalogEntries(catalog: DevCatalog): CatalogEntry[] {
  const entries: CatalogEntry[] = [{ kind: 'planning', name: 'lead', description: 'The lead asks what it needs, plans, shows you the plan, and runs it with workers' }];
  for (const def of catalog.agents) {
    if (def.mode === 'subagent') continue;
    const members = def.team?.members ?? def.router?.destinations ?? def.advisors;
    entries.push({ kind: def.team ? 'team' : 'agent', name: def.name, ...defined({ description: def.description }), ...(members?.length ? { members: [...members] } : {}) });
  }
  for (const t of catalog.templates.values()) {
    const parameters = Object.fromEntries(Object.entries(t.parameters ?? {}).map(([name, p]) => [name, { type: p.type, ...defined({ description: p.description, default: p.default }), ...(p.enum ? { enum: [...p.enum] } : {}) }]));
    entries.push({ kind: 'template', name: t.name, ...defined({ description: t.description }), parameters, members: t.chunks.map((c) => c.title) });
  }
  const squads: Array<[TeamPreset, 'repo' | 'builtin' | 'user']> = [
    ...(catalog.squads.repo ? [[catalog.squads.repo, 'repo'] as [TeamPreset, 'repo']] : []),
    ...catalog.squads.builtin.map((p): [TeamPreset, 'builtin'] => [p, 'builtin']),
    ...catalog.squads.user.map((p): [TeamPreset, 'user'] => [p, 'user']),
  ];
  for (const [preset, source] of squads) {
    entries.push({ kind: 'squad', name: preset.name, source, ...defined({ description: preset.description }), members: preset.workers.map((w) => w.name) });
  }
  return entries;
}
