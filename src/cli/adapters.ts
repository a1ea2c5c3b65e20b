/**
 * Adapters by name for `troupe run --adapter <name>`. Each entry builds an
 * adapter from the command line's context; add vendor adapters here.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { ModelAdapter } from '../core/adapter.js';
import type { Clock } from '../core/clock.js';
import { ConfigurationError, errorMessage } from '../core/errors.js';
import type { AgentDefinition } from '../agents/definition.js';
import { adapterFromEnv, ENV_ADAPTERS } from '../adapters/env.js';
import { scriptedAdapter, type ScriptedRequest } from '../adapters/scripted.js';
import { defined } from '../core/defined.js';

/** What an adapter factory receives from the command line. */
export interface CliAdapterContext {
  /** The loaded agent definitions. */
  defs: readonly AgentDefinition[];
  /** `--script <file>`, when given. */
  script?: string;
  /** The environment (for keys and base URLs). */
  env: Readonly<Record<string, string | undefined>>;
  /** The run's clock (the scripted adapter's latency runs on it). */
  clock?: Clock;
  /** The scripted adapter's reply when no `--script` gives one. Default: routers pick their first destination, other agents echo. */
  fallback?: (request: ScriptedRequest) => string;
}

/** Builds an adapter for the CLI. */
export type CliAdapterFactory = (context: CliAdapterContext) => ModelAdapter | Promise<ModelAdapter>;

/** The adapters `--adapter` (or `TROUPE_ADAPTER`) can name. */
export const cliAdapters: Readonly<Record<string, CliAdapterFactory>> = {
  scripted: scriptedCliAdapter,
  ...Object.fromEntries(ENV_ADAPTERS.map((name) => [name, (context: CliAdapterContext) => envAdapter(name, context)])),
};

/** A vendor adapter configured from the environment (see `adapterFromEnv`), whatever `TROUPE_ADAPTER` says. */
function envAdapter(name: string, context: CliAdapterContext): ModelAdapter {
  const adapter = adapterFromEnv({ ...context.env, TROUPE_ADAPTER: name });
  if (!adapter) throw new ConfigurationError(`Adapter "${name}" could not be configured from the environment`, { code: 'unknown_adapter' });
  return adapter;
}

/** The adapter name to use: the flag, else `TROUPE_ADAPTER`, else `scripted`. */
export function cliAdapterName(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  return flag ?? (env.TROUPE_ADAPTER || 'scripted');
}

/**
 * The line a command prints on standard error before it runs: which adapter
 * answers, and where that came from. The scripted adapter without a script
 * is an offline stand-in, and says so: its answers are not a model's.
 */
export function adapterLine(command: string, flag: string | undefined, env: Readonly<Record<string, string | undefined>>, script: string | undefined): string {
  const name = cliAdapterName(flag, env);
  const from = flag !== undefined ? '--adapter' : env.TROUPE_ADAPTER ? 'TROUPE_ADAPTER' : 'the default';
  if (name === 'scripted' && script === undefined) {
    return `${command}: adapter scripted (${from}): offline replies, not a model's (routers pick their first destination, agents echo); --adapter or TROUPE_ADAPTER picks a model`;
  }
  return `${command}: adapter ${name} (${from}${name === 'scripted' ? ', replies from --script' : ''})`;
}

/** Build the adapter called `name`, or fail with the names that exist. */
export async function createCliAdapter(name: string, context: CliAdapterContext): Promise<ModelAdapter> {
  const factory = cliAdapters[name];
  if (!factory) {
    throw new ConfigurationError(`Unknown adapter "${name}" (available: ${Object.keys(cliAdapters).join(', ')})`, {
      code: 'unknown_adapter',
      details: { adapter: name },
    });
  }
  return factory(context);
}

const turnSchema = z.union(
  [
    z.string(),
    z.strictObject({
      text: z.string().optional(),
      toolCalls: z.array(z.strictObject({ name: z.string(), arguments: z.unknown().optional() })).optional(),
      delayMs: z.number().nonnegative().optional(),
    }),
  ],
  { error: 'expected a reply: a string, or { "text", "toolCalls", "delayMs" }' },
);
const scriptSchema = z.strictObject({
  replies: z.record(z.string(), z.array(turnSchema)).optional(),
  fallback: turnSchema.optional(),
  latencyMs: z.number().nonnegative().optional(),
  capabilities: z.strictObject({ tools: z.boolean().optional(), streaming: z.boolean().optional() }).optional(),
});

/** Where an issue is in a JSON document, as a reader writes it: `replies.desk[0]`, `replies["a b"]`. */
function jsonPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out === '' ? '(the document)' : out;
}

/** Read and check a `--script` file: a `ConfigurationError` with one line per problem, each with its place. */
async function readScript(file: string): Promise<z.infer<typeof scriptSchema>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigurationError(`Cannot read the script ${file}: ${errorMessage(error)}`, { code: 'invalid_option', cause: error });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigurationError(`The script ${file} is not JSON: ${errorMessage(error)}`, { code: 'invalid_option', cause: error });
  }
  const checked = scriptSchema.safeParse(value);
  if (checked.success) return checked.data;
  const lines = checked.error.issues.map((issue) => `  ${jsonPath(issue.path)}: ${issue.message}`);
  throw new ConfigurationError(
    `The script ${file} has ${lines.length === 1 ? 'a problem' : `${lines.length} problems`}:\n${lines.join('\n')}`,
    { code: 'invalid_option', details: { issues: checked.error.issues.map((i) => ({ path: jsonPath(i.path), message: i.message })) } },
  );
}

/**
 * The offline adapter. With `--script <file.json>` (`{ replies: { agent:
 * [turn...] }, fallback, capabilities, latencyMs }`, a turn may have its own
 * `delayMs`) it plays those replies; without,
 * routers choose their first destination (`ROUTE: <name>`) and every other
 * agent echoes the request it got.
 */
async function scriptedCliAdapter(context: CliAdapterContext): Promise<ModelAdapter> {
  const fallback = context.fallback ?? echoReply(context.defs);
  // Tools on: agents with sub-agents get them as tools (the echo never calls one).
  if (context.script === undefined) return scriptedAdapter({ capabilities: { tools: true }, fallback });
  const script = await readScript(context.script);
  return scriptedAdapter({
    ...(script.replies ? { replies: script.replies } : {}),
    fallback: script.fallback ?? fallback,
    ...defined({ latencyMs: script.latencyMs, clock: context.clock }),
    ...(script.capabilities ? { capabilities: script.capabilities } : {}),
  });
}

function echoReply(defs: readonly AgentDefinition[]) {
  const routes = new Map(defs.filter((d) => d.router).map((d) => [d.name, d.router!.destinations[0]]));
  return (req: ScriptedRequest): string => {
    const route = routes.get(req.agent);
    if (route !== undefined) return `ROUTE: ${route}`;
    const request = /^## ORIGINAL USER REQUEST\n(.*)/.exec(req.text)?.[1] ?? req.text.split('\n')[0] ?? '';
    return `${req.agent} handled: ${request.slice(0, 200)}`;
  };
}
