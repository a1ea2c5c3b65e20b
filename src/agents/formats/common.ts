/**
 * What every format module shares: a reader of front-matter fields that
 * reports empty keys, wrong types (saying what was found), unused and
 * unknown keys in one way, and the writing of a front matter. Knows no
 * format.
 * @module
 */
import { stringify } from 'yaml';
import { describeValue } from '../../core/errors.js';
import {
  AGENT_NAME_PATTERN,
  isAgentName,
  isPathReference,
  type AgentDefinition,
  type AgentFormat,
  type AgentIssue,
  type AgentParseResult,
} from '../definition.js';
import { defined } from '../../core/defined.js';

/** A key's path, as issues show it: `` `limits.maxTurns` ``. */
const show = (path: ReadonlyArray<string | number>): string => `\`${path.join('.')}\``;

/**
 * Reads the fields of one front matter. Every read marks its key as used;
 * {@link FieldReader.finish} keeps the rest in `extra`, each with a warning.
 * A known key left empty (`tools:` with every entry commented out, which
 * YAML reads as `null`) reads as absent, with a warning. A value of the
 * wrong type is an issue that says what was found.
 */
export class FieldReader {
  readonly issues: AgentIssue[] = [];
  readonly warnings: AgentIssue[] = [];
  readonly #data: Record<string, unknown>;
  readonly #used = new Set<string>();
  readonly #unused = new Map<string, string>();
  readonly #label: string;

  /**
   * @param data the front matter
   * @param known every key the format defines (used or not)
   * @param label the format's name for messages (`Claude Code`)
   */
  constructor(data: Record<string, unknown>, known: readonly string[], label: string) {
    this.#data = data;
    this.#label = label;
    const isKnown = new Set(known);
    for (const key of Object.keys(data)) {
      if (isKnown.has(key) && data[key] === null) {
        this.#used.add(key);
        this.warnings.push({ code: 'empty_key', message: `\`${key}\` is empty: read as absent`, path: [key] });
      }
    }
  }

  /** True when the front matter sets `key` to something other than `null`. */
  has(key: string): boolean {
    return Object.hasOwn(this.#data, key) && this.#data[key] !== null && this.#data[key] !== undefined;
  }

  /** The raw value of `key` (`undefined` when absent or empty), marking it used. */
  raw(key: string): unknown {
    this.#used.add(key);
    const value = Object.hasOwn(this.#data, key) ? this.#data[key] : undefined;
    return value === null ? undefined : value;
  }

  /** An issue: `` `key`: expected <what>, got <value> (<type>) ``. */
  wrong(path: ReadonlyArray<string | number>, expected: string, value: unknown): undefined {
    this.issues.push({ code: 'invalid_value', message: `${show(path)}: expected ${expected}, got ${describeValue(value)}`, path: [...path] });
    return undefined;
  }

  /** A warning about `path`. */
  warn(code: string, message: string, path: ReadonlyArray<string | number>): void {
    this.warnings.push({ code, message, path: [...path] });
  }

  /** A text value. */
  text(key: string): string | undefined {
    const value = this.raw(key);
    if (value === undefined || typeof value === 'string') return value;
    return this.wrong([key], 'text', value);
  }

  /** A number, optionally an integer, at least `min`. */
  number(key: string, rule: { integer?: boolean; min?: number; positive?: boolean } = {}): number | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    const ok =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      (!rule.integer || Number.isInteger(value)) &&
      (rule.min === undefined || value >= rule.min) &&
      (!rule.positive || value > 0);
    if (ok) return value;
    const kind = rule.integer ? 'whole number' : 'number';
    const what = rule.positive ? `a positive ${kind}` : rule.min !== undefined ? `a ${kind} of at least ${rule.min}` : `a ${kind}`;
    return this.wrong([key], what, value);
  }

  /** `true` or `false`. */
  boolean(key: string): boolean | undefined {
    const value = this.raw(key);
    if (value === undefined || typeof value === 'boolean') return value;
    return this.wrong([key], 'true or false', value);
  }

  /** One text or a list of texts (an empty list reads as absent). */
  list(key: string, what = 'a name or a list of names'): string[] | undefined {
    return this.listAt([key], this.raw(key), what);
  }

  /** {@link FieldReader.list} of a value found at `path`. */
  listAt(path: ReadonlyArray<string | number>, value: unknown, what = 'a name or a list of names'): string[] | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string') return value.trim() === '' ? undefined : [value.trim()];
    if (!Array.isArray(value)) return this.wrong(path, what, value);
    const out: string[] = [];
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item !== 'string' || item.trim() === '') return this.wrong([...path, i], 'a name', item);
      out.push(item.trim());
    }
    return out.length === 0 ? undefined : out;
  }

  /** References to agents: names or paths to their files (and `*`, every agent, where `all` says so). */
  refs(key: string, all = false): string[] | undefined {
    const list = this.list(key, 'an agent name or a list of agent names');
    if (list === undefined) return undefined;
    for (const [i, ref] of list.entries()) {
      if (!isReference(ref) && !(all && ref === '*')) return this.wrong([key, i], 'an agent name or a path to an agent file (./x.ai)', ref);
    }
    return list;
  }

  /** A record of key/value pairs. */
  record(key: string): Record<string, unknown> | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    return this.wrong([key], 'a mapping of keys to values', value);
  }

  /** A key the format defines and troupe keeps without using it: kept in `extra`, with a warning. */
  unused(key: string, why?: string): void {
    if (this.has(key)) this.#unused.set(key, why ?? '');
  }

  /**
   * The agent's name: the `name` key when `nameKey` is set and present,
   * else `fallback` (the file's name); an issue when neither is a valid name.
   */
  name(fallback: string | undefined, nameKey: string | undefined): string | undefined {
    const given = nameKey === undefined ? undefined : this.text(nameKey);
    const name = given?.trim() ?? fallback;
    if (name !== undefined && isAgentName(name)) return name;
    this.issues.push({
      code: 'invalid_value',
      message: `\`name\`: expected an agent name (${String(AGENT_NAME_PATTERN)}), got ${describeValue(name ?? null)}`,
      path: ['name'],
    });
    return undefined;
  }

  /**
   * The result: the issues when there are any; else `def` with every key
   * not read kept in `extra`, its warnings (agent and file set), its format.
   */
  finish(def: AgentDefinition | undefined, format: AgentFormat, file: string | undefined): AgentParseResult<AgentDefinition> {
    const at = (issue: AgentIssue): AgentIssue => ({
      ...issue,
      ...(def === undefined ? {} : { agent: def.name }),
      ...defined({ file }),
    });
    if (def === undefined || this.issues.length > 0) return { success: false, issues: this.issues.map(at) };
    const extra: Record<string, unknown> = {};
    const warnings = [...this.warnings];
    for (const [key, value] of Object.entries(this.#data)) {
      const why = this.#unused.get(key);
      if (why !== undefined) {
        extra[key] = value;
        warnings.push({ code: 'unused_key', message: `\`${key}\` (${this.#label}) is kept but not used${why === '' ? '' : `: ${why}`}`, path: [key] });
      } else if (!this.#used.has(key)) {
        extra[key] = value;
        warnings.push({ code: 'unknown_key', message: `Unknown key \`${key}\` is kept but not used`, path: [key] });
      }
    }
    if (Object.keys(extra).length > 0) def.extra = extra;
    def.warnings = warnings.map(at);
    def.format = format;
    if (file !== undefined) def.file = file;
    return { success: true, data: def };
  }
}

/** True for an agent name or a path to an agent file. */
export function isReference(ref: string): boolean {
  return AGENT_NAME_PATTERN.test(ref) || (isPathReference(ref) && ref.length <= 1024 && !ref.includes('\0'));
}

/** Set `def[key]` when `value` is defined (no `undefined` properties under `exactOptionalPropertyTypes`). */
export function assign<K extends keyof AgentDefinition>(def: AgentDefinition, key: K, value: AgentDefinition[K] | undefined): void {
  if (value !== undefined) def[key] = value;
}

/** The system prompt from a body: trimmed. */
export function systemFrom(body: string): string {
  return body.trim();
}

/**
 * Split a comma-separated list (`Read, Grep, Task(a, b)`), not inside
 * parentheses; items trimmed, empty ones dropped. Linear.
 */
export function splitCommaList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')' && depth > 0) depth--;
    else if (i === text.length || (c === ',' && depth === 0)) {
      const item = text.slice(from, i).trim();
      if (item !== '') out.push(item);
      from = i + 1;
    }
  }
  return out;
}

/**
 * A front matter and body as a file's text: `---`, the entries as YAML in
 * their order (undefined ones left out), `---`, a blank line, the body.
 */
export function writeFrontMatter(entries: Record<string, unknown>, body: string, firstLine?: string): string {
  const data = Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
  const yaml = Object.keys(data).length === 0 ? '' : stringify(data, { lineWidth: 0, aliasDuplicateObjects: false });
  return `${firstLine === undefined ? '' : `${firstLine}\n`}---\n${yaml}---\n\n${body.trim()}\n`;
}

/** A warning that the format has no place for a field of the definition. */
export function notWritten(def: AgentDefinition, field: string, label: string): AgentIssue {
  return { code: 'not_written', message: `\`${field}\` has no place in a ${label} file and is not written`, agent: def.name, path: [field] };
}

/** The fields of a definition that a writer must place, or warn it cannot: every field except the ones named. */
export function fieldsLeft(def: AgentDefinition, written: readonly string[], label: string): AgentIssue[] {
  const skip = new Set([...written, 'name', 'system', 'warnings', 'file', 'format', 'extra']);
  return Object.keys(def)
    .filter((key) => !skip.has(key) && (def as unknown as Record<string, unknown>)[key] !== undefined)
    .map((key) => notWritten(def, key, label));
}

/** Keys of an object that are not in `allowed`. */
function strayKeys(value: Record<string, unknown>, allowed: readonly string[]): string[] {
  return Object.keys(value).filter((k) => !allowed.includes(k));
}

/** `limits: { maxTurns, timeoutMs }`. */
export function readLimits(r: FieldReader, key = 'limits'): AgentDefinition['limits'] | undefined {
  const value = r.record(key);
  if (value === undefined) return undefined;
  const stray = strayKeys(value, ['maxTurns', 'timeoutMs']);
  if (stray.length > 0) return r.wrong([key, stray[0]!], 'only `maxTurns` and `timeoutMs`', value[stray[0]!]);
  const limits: NonNullable<AgentDefinition['limits']> = {};
  const { maxTurns, timeoutMs } = value;
  if (maxTurns !== undefined && maxTurns !== null) {
    if (typeof maxTurns === 'number' && Number.isInteger(maxTurns) && maxTurns > 0) limits.maxTurns = maxTurns;
    else r.wrong([key, 'maxTurns'], 'a positive whole number', maxTurns);
  }
  if (timeoutMs !== undefined && timeoutMs !== null) {
    if (typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0) limits.timeoutMs = timeoutMs;
    else r.wrong([key, 'timeoutMs'], 'a positive number', timeoutMs);
  }
  return Object.keys(limits).length > 0 ? limits : undefined;
}

/**
 * `router: { destinations, fallback? }`, or the short form `router: true`
 * with `agents: [...]`; without a router, `agents` lists sub-agents.
 */
export function readRouterAndSubAgents(r: FieldReader): { router?: NonNullable<AgentDefinition['router']>; subAgents?: string[] } {
  const router = r.raw('router');
  if (router === true) {
    const destinations = r.refs('agents');
    if (destinations === undefined) {
      r.issues.push({ code: 'invalid_value', message: '`router: true` needs `agents`: a list of agent names', path: ['agents'] });
      return {};
    }
    return { router: { destinations } };
  }
  const subAgents = r.refs('agents', true);
  const out: { router?: NonNullable<AgentDefinition['router']>; subAgents?: string[] } = subAgents === undefined ? {} : { subAgents };
  if (router === undefined || router === false) return out;
  if (typeof router !== 'object' || Array.isArray(router)) {
    r.wrong(['router'], '`true` or { destinations: [...], fallback? }', router);
    return out;
  }
  const spec = router as Record<string, unknown>;
  const stray = strayKeys(spec, ['destinations', 'fallback']);
  if (stray.length > 0) {
    r.wrong(['router', stray[0]!], 'only `destinations` and `fallback`', spec[stray[0]!]);
    return out;
  }
  if (!Array.isArray(spec.destinations)) {
    r.wrong(['router', 'destinations'], 'a list of agent names', spec.destinations);
    return out;
  }
  const destinations: string[] = [];
  for (const [i, d] of spec.destinations.entries()) {
    if (typeof d !== 'string' || !isReference(d)) return r.wrong(['router', 'destinations', i], 'an agent name', d) ?? out;
    destinations.push(d);
  }
  const fallback = spec.fallback;
  if (fallback !== undefined && fallback !== null && !(typeof fallback === 'string' && isReference(fallback))) {
    r.wrong(['router', 'fallback'], 'an agent name', fallback);
    return out;
  }
  return { ...out, router: { destinations, ...(typeof fallback === 'string' ? { fallback } : {}) } };
}

/** `advisors: name | [names]` and `handoff: name`. */
export function readAdvisorsAndHandoff(r: FieldReader): Pick<AgentDefinition, 'advisors' | 'handoff'> {
  const out: Pick<AgentDefinition, 'advisors' | 'handoff'> = {};
  const advisors = r.refs('advisors');
  if (advisors !== undefined) out.advisors = advisors;
  const handoff = r.raw('handoff');
  if (handoff !== undefined) {
    if (typeof handoff === 'string' && isReference(handoff)) out.handoff = handoff;
    else r.wrong(['handoff'], 'an agent name (one agent; `handoffs` offers several)', handoff);
  }
  return out;
}

/** The termination modes a file may name: the team pattern's (`max-rounds`, `lead-decides`) and the words of files written before 0.1.0. */
const TERMINATION: Record<string, NonNullable<AgentDefinition['team']>['terminationMode']> = {
  consensus: 'consensus',
  'max-rounds': 'max-rounds',
  'lead-decides': 'lead-decides',
  lead: 'lead-decides',
  maxRounds: 'max-rounds',
  coordinatorDecides: 'lead-decides',
  coordinator: 'lead-decides',
};

/** `team: { members, lead?, terminationMode?, maxRounds?, turnBased? }` (`coordinator` is read as `lead`). */
export function readTeam(r: FieldReader): AgentDefinition['team'] | undefined {
  const value = r.record('team');
  if (value === undefined) return undefined;
  const stray = strayKeys(value, ['members', 'lead', 'coordinator', 'terminationMode', 'maxRounds', 'turnBased']);
  if (stray.length > 0) return r.wrong(['team', stray[0]!], 'one of members, lead, terminationMode, maxRounds, turnBased', value[stray[0]!]);
  const members = r.listAt(['team', 'members'], value.members, 'a list of agent names');
  if (members === undefined || members.some((m) => !isReference(m))) return r.wrong(['team', 'members'], 'a non-empty list of agent names', value.members);
  const team: NonNullable<AgentDefinition['team']> = { members };
  const { terminationMode, maxRounds, turnBased } = value;
  const leadKey = value.lead !== undefined && value.lead !== null ? 'lead' : 'coordinator';
  const lead = value[leadKey];
  if (lead !== undefined && lead !== null) {
    if (typeof lead === 'string' && isReference(lead)) team.lead = lead;
    else return r.wrong(['team', leadKey], 'an agent name', lead);
  }
  if (terminationMode !== undefined && terminationMode !== null) {
    const mode = typeof terminationMode === 'string' ? TERMINATION[terminationMode] : undefined;
    if (mode === undefined) return r.wrong(['team', 'terminationMode'], 'consensus, max-rounds or lead-decides', terminationMode);
    team.terminationMode = mode;
  }
  if (maxRounds !== undefined && maxRounds !== null) {
    if (typeof maxRounds === 'number' && Number.isInteger(maxRounds) && maxRounds > 0) team.maxRounds = maxRounds;
    else return r.wrong(['team', 'maxRounds'], 'a positive whole number', maxRounds);
  }
  if (turnBased !== undefined && turnBased !== null) {
    if (typeof turnBased === 'boolean') team.turnBased = turnBased;
    else return r.wrong(['team', 'turnBased'], 'true or false', turnBased);
  }
  return team;
}

/** `handoffs: [{ agent, label?, prompt?, send? }]` (the shape GitHub Copilot gives them); other keys of an item are warned about. */
export function readHandoffChoices(r: FieldReader, key = 'handoffs'): AgentDefinition['handoffs'] | undefined {
  const value = r.raw(key);
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return r.wrong([key], 'a list of { label, agent, prompt, send }', value);
  const out: NonNullable<AgentDefinition['handoffs']> = [];
  for (const [i, item] of value.entries()) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return r.wrong([key, i], '{ label, agent, prompt, send }', item);
    const { agent, label, prompt, send, ...rest } = item as Record<string, unknown>;
    if (typeof agent !== 'string' || !isReference(agent.trim())) return r.wrong([key, i, 'agent'], 'an agent name', agent);
    const choice: NonNullable<AgentDefinition['handoffs']>[number] = { agent: agent.trim() };
    if (label !== undefined && label !== null) {
      if (typeof label !== 'string') return r.wrong([key, i, 'label'], 'text', label);
      choice.label = label;
    }
    if (prompt !== undefined && prompt !== null) {
      if (typeof prompt !== 'string') return r.wrong([key, i, 'prompt'], 'text', prompt);
      choice.prompt = prompt;
    }
    if (send !== undefined && send !== null) {
      if (typeof send !== 'boolean') return r.wrong([key, i, 'send'], 'true or false', send);
      choice.send = send;
    }
    for (const stray of Object.keys(rest)) r.warn('unused_key', `\`${key}[${i}].${stray}\` is kept but not used`, [key, i, stray]);
    out.push(choice);
  }
  return out.length === 0 ? undefined : out;
}

/**
 * MCP servers: a list of names and `{ name: config }` items (Claude Code),
 * or a mapping of names to configurations (GitHub Copilot's `mcp-servers`).
 */
export function readMcpServers(r: FieldReader, key: string): AgentDefinition['mcpServers'] | undefined {
  const value = r.raw(key);
  if (value === undefined) return undefined;
  const out: NonNullable<AgentDefinition['mcpServers']> = [];
  const add = (name: string, config: unknown, path: ReadonlyArray<string | number>): boolean => {
    if (config === null || config === undefined) out.push({ name });
    else if (typeof config === 'object' && !Array.isArray(config)) out.push({ name, config: config as Record<string, unknown> });
    else return r.wrong(path, 'a server configuration (a mapping)', config) ?? false;
    return true;
  };
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      if (typeof item === 'string' && item.trim() !== '') out.push({ name: item.trim() });
      else if (item !== null && typeof item === 'object' && !Array.isArray(item) && Object.keys(item).length === 1) {
        const [name, config] = Object.entries(item as Record<string, unknown>)[0]!;
        if (!add(name, config, [key, i, name])) return undefined;
      } else return r.wrong([key, i], 'a server name or { name: configuration }', item);
    }
  } else if (typeof value === 'object') {
    for (const [name, config] of Object.entries(value as Record<string, unknown>)) if (!add(name, config, [key, name])) return undefined;
  } else return r.wrong([key], 'a list of MCP servers or a mapping of names to configurations', value);
  return out.length === 0 ? undefined : out;
}

/** MCP servers as a Claude Code style list: names, and `{ name: config }` for inline ones. */
export function mcpServerList(servers: AgentDefinition['mcpServers']): unknown[] | undefined {
  return servers?.map((s) => (s.config === undefined ? s.name : { [s.name]: s.config }));
}

/** The handoff choices as they are written: `{ label?, agent, prompt?, send? }` in that order. */
export function handoffList(choices: AgentDefinition['handoffs']): unknown[] | undefined {
  return choices?.map((c) => ({
    ...defined({ label: c.label }),
    agent: c.agent,
    ...defined({ prompt: c.prompt, send: c.send }),
  }));
}
