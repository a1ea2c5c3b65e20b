/**
 * Choose a model adapter from environment variables, so examples and the
 * CLI run on the scripted adapter by default and on a real model when the
 * environment names one. Loads no vendor package until a session opens.
 * @module troupe/adapters/env
 * @category Adapters
 */
import type { LanguageModel } from 'ai';
import type { ModelAdapter, ModelSession, OpenSessionOptions, SessionSpec } from '../core/adapter.js';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { aiSdkAdapter, type AiSdkAdapterOptions } from './ai-sdk.js';
import { aiSdkSettings, type AiSdkSettings } from './ai-sdk-options.js';
import { defineOptions, func } from '../core/options.js';
import { openaiAdapter } from './openai.js';
import { openAISettings, type OpenAISettings } from './openai-options.js';
import { loadPeer } from './peer.js';
import { DEFAULT_PASS_ENV, processAdapter, processSettings, type ProcessAdapterOptions } from './process.js';

/** The environment, as `process.env`. */
export type Environment = Record<string, string | undefined>;

export type { AiSdkSettings } from './ai-sdk-options.js';
export type { OpenAISettings } from './openai-options.js';

/**
 * Options of {@link adapterFromEnv}: settings the environment does not
 * carry. Its types need neither `ai` nor `openai` installed (a ready
 * `client` or a `model` object is for the adapters' own subpaths).
 */
export interface AdapterFromEnvOptions {
  /** Merged into the options of the `openai` adapter. */
  openai?: OpenAISettings;
  /** Merged into the options of the `ai-sdk` adapter. */
  aiSdk?: AiSdkSettings;
  /** Merged into the options of the `process` adapter. */
  process?: Partial<ProcessAdapterOptions>;
  /** Loads the provider package named by `TROUPE_AI_PROVIDER`. Default: a dynamic `import()`. */
  importProvider?: (name: string) => Promise<unknown>;
}

const adapterFromEnvOptions = defineOptions<AdapterFromEnvOptions>('adapterFromEnv', { openai: openAISettings, aiSdk: aiSdkSettings, process: processSettings, importProvider: func });

/** The adapters `TROUPE_ADAPTER` may name. */
export const ENV_ADAPTERS = ['openai', 'ai-sdk', 'process'] as const;

/**
 * The adapter named by `TROUPE_ADAPTER`, or `undefined` when it is unset,
 * empty or `scripted` (the caller then uses its scripted adapter).
 *
 * - `openai`: `OPENAI_BASE_URL` (e.g. `http://localhost:11434/v1`),
 *   `OPENAI_API_KEY`.
 * - `ai-sdk`: `TROUPE_AI_PROVIDER` names a provider package (`openai` is
 *   short for `@ai-sdk/openai`; any package whose exports include a provider
 *   instance works); without it the model id goes to the AI SDK's default
 *   provider (its gateway).
 * - `process`: `TROUPE_COMMAND` (a command line, split into arguments
 *   without a shell; `{prompt}` marks the prompt, else it goes to stdin),
 *   `TROUPE_COMMAND_OUTPUT` (`text` or `jsonl`), `TROUPE_PASS_ENV`
 *   (comma-separated names passed through besides the defaults).
 * - `TROUPE_MODEL`, when set, replaces the model of every agent: the server
 *   chosen by the environment rarely knows the models named in code.
 *
 * @example
 * ```ts
 * const adapter = adapterFromEnv() ?? scriptedAdapter({ fallback: 'offline answer' });
 * ```
 */
export function adapterFromEnv(env: Environment = process.env, options: AdapterFromEnvOptions = {}): ModelAdapter | undefined {
  adapterFromEnvOptions.check(options);
  const name = (env['TROUPE_ADAPTER'] ?? '').trim();
  if (name === '' || name === 'scripted') return undefined;
  const model = nonEmpty(env['TROUPE_MODEL']);
  switch (name) {
    case 'openai': {
      const baseURL = nonEmpty(env['OPENAI_BASE_URL']);
      const apiKey = nonEmpty(env['OPENAI_API_KEY']);
      return withModel(
        openaiAdapter({
          ...(baseURL !== undefined && { baseURL }),
          ...(apiKey !== undefined && { apiKey }),
          ...(model !== undefined && { model }),
          ...options.openai,
        }),
        model,
      );
    }
    case 'ai-sdk':
      return withModel(aiSdkAdapter({ model: providerModel(env, options), ...options.aiSdk }), model);
    case 'process': {
      const command = nonEmpty(env['TROUPE_COMMAND']);
      if (!command) throw new ConfigurationError('TROUPE_ADAPTER=process needs TROUPE_COMMAND, e.g. TROUPE_COMMAND="claude -p"');
      const output = nonEmpty(env['TROUPE_COMMAND_OUTPUT']) ?? 'text';
      if (output !== 'text' && output !== 'jsonl') {
        throw new ConfigurationError(`Expected TROUPE_COMMAND_OUTPUT to be "text" or "jsonl", got ${describeValue(output)}`);
      }
      const extra = (env['TROUPE_PASS_ENV'] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      return withModel(
        processAdapter({ command: splitCommand(command), output, passEnv: [...DEFAULT_PASS_ENV, ...extra], ...options.process }),
        model,
      );
    }
    default:
      throw new ConfigurationError(`Unknown TROUPE_ADAPTER ${describeValue(name)}: expected one of scripted, ${ENV_ADAPTERS.join(', ')}`, {
        code: 'unknown_adapter',
        details: { adapter: name },
      });
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** Replace every session's model with `model`, when set. */
function withModel(adapter: ModelAdapter, model: string | undefined): ModelAdapter {
  if (model === undefined) return adapter;
  return {
    id: adapter.id,
    capabilities: adapter.capabilities,
    openSession: (spec: SessionSpec, options?: OpenSessionOptions): Promise<ModelSession> => adapter.openSession({ ...spec, model }, options),
  };
}

/** A provider instance: callable, with `languageModel(id)`. */
interface ProviderLike {
  languageModel(modelId: string): unknown;
}

function isProvider(value: unknown): value is ProviderLike {
  return (typeof value === 'function' || (typeof value === 'object' && value !== null)) &&
    typeof (value as { languageModel?: unknown }).languageModel === 'function';
}

/**
 * Load a provider package: a scoped name as it is; a bare name as
 * `@ai-sdk/<name>` first, then as the package of that name.
 */
async function loadProvider(provider: string, importer: (name: string) => Promise<unknown>): Promise<Record<string, unknown>> {
  const candidates = provider.startsWith('@') ? [provider] : [`@ai-sdk/${provider}`, provider];
  let firstError: unknown;
  for (const pkg of candidates) {
    try {
      return (await loadPeer(pkg, () => importer(pkg), 'TROUPE_AI_PROVIDER')) as Record<string, unknown>;
    } catch (error) {
      firstError ??= error;
    }
  }
  throw firstError;
}

/** The model resolver for `TROUPE_AI_PROVIDER`: loads the provider package on first use. */
function providerModel(env: Environment, options: AdapterFromEnvOptions): AiSdkAdapterOptions['model'] {
  const provider = nonEmpty(env['TROUPE_AI_PROVIDER']);
  return async (modelId) => {
    if (!modelId) throw new ConfigurationError('TROUPE_ADAPTER=ai-sdk needs a model: set TROUPE_MODEL or the agent\'s `model`');
    if (!provider) return modelId;
    const mod = await loadProvider(provider, options.importProvider ?? ((name: string) => import(name)));
    const instance = [mod['default'], ...Object.values(mod)].find(isProvider);
    if (!instance) {
      throw new ConfigurationError(`TROUPE_AI_PROVIDER "${provider}" exports no AI SDK provider instance (an object with \`languageModel\`)`, {
        details: { provider },
      });
    }
    return instance.languageModel(modelId) as LanguageModel;
  };
}

/**
 * Split a command line into arguments the way a POSIX shell would, without
 * running one: whitespace separates, single quotes keep everything, double
 * quotes keep everything but `\"`, `\\`, `\$` and `` \` `` escapes, and a
 * backslash outside quotes escapes the next character. No expansion of any
 * kind (`$VAR`, `~`, globs) happens.
 *
 * @example
 * ```ts
 * splitCommand(`claude -p --append-system-prompt 'Be terse.'`);
 * // ['claude', '-p', '--append-system-prompt', 'Be terse.']
 * ```
 */
export function splitCommand(line: string): string[] {
  const args: string[] = [];
  let current = '';
  let started = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else current += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1]!)) current += line[++i];
      else current += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      started = true;
    } else if (ch === '\\') {
      if (i + 1 < line.length) current += line[++i];
      started = true;
    } else if (/\s/.test(ch)) {
      if (started) args.push(current);
      current = '';
      started = false;
    } else {
      current += ch;
      started = true;
    }
  }
  if (quote) throw new ConfigurationError(`Unterminated ${quote === '"' ? 'double' : 'single'} quote in command ${describeValue(line)}`);
  if (started) args.push(current);
  if (args.length === 0) throw new ConfigurationError(`Expected a command, got ${describeValue(line)}`);
  return args;
}
