/**
 * Agent Cards: the one served for a troupe runnable (generated from its
 * definition: name, description, skills from the agent files, capabilities,
 * authentication), as the JSON of A2A 1.0.
 * @module
 */
import type { AgentDefinition } from '../../agents/definition.js';
import { agentEdges, reachableAgents } from '../../agents/validate.js';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { anything, defineOptions, listOf, object, string } from '../../core/options.js';

/** The A2A protocol version troupe's server speaks and its worker prefers. */
export const A2A_PROTOCOL_VERSION = '1.0';

/** Where an agent's card is served, under its base URL. */
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

/** One skill of an agent card. */
export interface A2AAgentSkill {
  /** A unique id within the card. */
  id: string;
  /** A name for people. */
  name: string;
  /** What the skill does. */
  description: string;
  /** Keywords. */
  tags: string[];
  /** Example requests. */
  examples?: string[];
  /** Media types the skill takes, when not the card's. */
  inputModes?: string[];
  /** Media types the skill answers in, when not the card's. */
  outputModes?: string[];
}

/** One way of authenticating to an agent (the protocol's `SecurityScheme`, as JSON). */
export type A2ASecurityScheme =
  | { httpAuthSecurityScheme: { scheme: string; bearerFormat?: string; description?: string } }
  | { apiKeySecurityScheme: { location: 'header' | 'query' | 'cookie'; name: string; description?: string } }
  | { openIdConnectSecurityScheme: { openIdConnectUrl: string; description?: string } }
  | { mtlsSecurityScheme: { description?: string } };

/** One interface of an agent: where it is served and over which binding. */
export interface A2AAgentInterface {
  url: string;
  /** `JSONRPC`, `HTTP+JSON` or `GRPC`. */
  protocolBinding: string;
  protocolVersion: string;
  tenant?: string;
}

/** An Agent Card, as JSON (A2A 1.0). */
export interface A2AAgentCard {
  name: string;
  description: string;
  version: string;
  /** The interfaces, the preferred first. */
  supportedInterfaces: A2AAgentInterface[];
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  iconUrl?: string;
  capabilities: { streaming?: boolean; pushNotifications?: boolean; extendedAgentCard?: boolean };
  /** Authentication schemes, by name. */
  securitySchemes?: Record<string, A2ASecurityScheme>;
  /** Which schemes a client must use (each entry: scheme name → scopes). */
  securityRequirements?: Array<{ schemes: Record<string, { list: string[] }> }>;
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: A2AAgentSkill[];
}

/** What a served agent's card says beyond what troupe generates (each field replaces the generated one). */
export interface AgentCardOptions {
  /** The agent's name. Default: the runnable's (or the entry agent's) name. */
  name?: string;
  /** What it does. Default: the entry agent's description, else a sentence naming the runnable. */
  description?: string;
  /** The agent's version. Default: `1.0.0`. */
  version?: string;
  /** Its skills. Default: one per agent file the entry agent reaches (see {@link skillsFromAgents}), else one for the runnable. */
  skills?: A2AAgentSkill[];
  /** Who provides it. */
  provider?: { organization: string; url: string };
  /** Where its documentation is. */
  documentationUrl?: string;
  /** Its icon. */
  iconUrl?: string;
  /** How clients authenticate (checked by your `authorize` hook), by scheme name. */
  securitySchemes?: Record<string, A2ASecurityScheme>;
  /** Which schemes clients must use. Default: each scheme of `securitySchemes` is enough on its own. */
  securityRequirements?: Array<{ schemes: Record<string, { list: string[] }> }>;
}

/** The media types troupe's server takes and answers in. */
const INPUT_MODES = ['text/plain', 'application/json'];
const OUTPUT_MODES = ['text/plain'];

/** The skill of one agent definition: its name, description and what it does (its kind, tools, sub-agents). */
function skillOf(def: AgentDefinition, defs: readonly AgentDefinition[]): A2AAgentSkill {
  const tags = new Set<string>();
  if (def.team) tags.add('team');
  if (def.router) tags.add('router');
  if (def.advisors?.length) tags.add('advisors');
  if (def.handoff !== undefined || def.handoffs?.length) tags.add('handoff');
  for (const edge of agentEdges(defs)) if (edge.from === def.name && edge.kind === 'subagent') tags.add('delegates');
  for (const tool of def.tools ?? []) tags.add(`tool:${tool}`);
  if (tags.size === 0) tags.add('agent');
  const description = def.description?.trim() || firstLine(def.system) || `The agent ${def.name}`;
  return { id: def.name, name: def.name, description, tags: [...tags] };
}

function firstLine(text: string): string {
  const line = text.trim().split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * The skills of agent `entry` of a folder: one for it and one for every
 * agent it reaches (its team, sub-agents, hand-offs, advisors, router
 * destinations), each from its file: the name, the description (or the
 * first line of its prompt) and tags for what it is and the tools it has.
 */
export function skillsFromAgents(defs: readonly AgentDefinition[], entry: string): A2AAgentSkill[] {
  const byName = new Map(defs.map((d) => [d.name, d]));
  if (!byName.has(entry)) throw new ConfigurationError(`Expected \`entry\` to be an agent of the folder, got ${describeValue(entry)} (agents: ${defs.map((d) => d.name).join(', ')})`);
  return reachableAgents(defs, entry)
    .map((name) => byName.get(name))
    .filter((d): d is AgentDefinition => d !== undefined)
    .map((d) => skillOf(d, defs));
}

/** What {@link buildAgentCard} needs besides the options. */
export interface CardSource {
  /** The runnable's name. */
  runnable: string;
  /** The JSON-RPC endpoint's URL. */
  url: string;
  /** The agent definitions the runnable was compiled from, and which is the entry. */
  agents?: { defs: readonly AgentDefinition[]; entry: string };
}

const agentCardOptions = defineOptions<AgentCardOptions>('buildAgentCard', {
  name: string,
  description: string,
  version: string,
  skills: listOf(object),
  provider: object,
  documentationUrl: string,
  iconUrl: string,
  securitySchemes: object,
  securityRequirements: anything,
});

/**
 * The card of a served runnable: generated from its name (and, when it was
 * compiled from agent files, the entry agent's file and the skills of every
 * agent it reaches), with `options` replacing any field. Capabilities:
 * streaming, no push notifications.
 */
export function buildAgentCard(source: CardSource, options: AgentCardOptions = {}): A2AAgentCard {
  agentCardOptions.check(options);
  const entry = source.agents?.defs.find((d) => d.name === source.agents?.entry);
  const name = options.name ?? entry?.name ?? source.runnable;
  const skills = options.skills ?? (source.agents ? skillsFromAgents(source.agents.defs, source.agents.entry) : [{ id: source.runnable, name: source.runnable, description: `Runs ${source.runnable} on the request`, tags: ['troupe'] }]);
  const ids = new Set<string>();
  for (const skill of skills) {
    if (typeof skill?.id !== 'string' || skill.id === '') throw new ConfigurationError(`Expected every skill to have an \`id\`, got ${describeValue(skill)}`);
    if (ids.has(skill.id)) throw new ConfigurationError(`Skill id "${skill.id}" is given twice`);
    ids.add(skill.id);
  }
  const schemes = options.securitySchemes;
  const card: A2AAgentCard = {
    name,
    description: options.description ?? (entry?.description?.trim() || `troupe runnable ${source.runnable}`),
    version: options.version ?? '1.0.0',
    supportedInterfaces: [{ url: source.url, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION }],
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
    defaultInputModes: INPUT_MODES,
    defaultOutputModes: OUTPUT_MODES,
    skills,
  };
  if (options.provider) card.provider = options.provider;
  if (options.documentationUrl) card.documentationUrl = options.documentationUrl;
  if (options.iconUrl) card.iconUrl = options.iconUrl;
  if (schemes && Object.keys(schemes).length > 0) {
    card.securitySchemes = schemes;
    card.securityRequirements = options.securityRequirements ?? Object.keys(schemes).map((scheme) => ({ schemes: { [scheme]: { list: [] } } }));
  }
  return card;
}
