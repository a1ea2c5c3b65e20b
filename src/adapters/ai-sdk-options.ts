/**
 * The settings of the AI SDK adapter that need no type of the `ai`
 * package, in a module of their own so that `troupe/adapters/env` (which
 * takes them) type-checks without the optional peer installed.
 * @module
 */
import { boolean, check, defineOptions, nonNegativeInteger, object, string } from '../core/options.js';

/** The options of `aiSdkAdapter` but the `model`: what `adapterFromEnv` can merge in. */
export interface AiSdkSettings {
  /**
   * The model id a `model` function gets for an agent that names no model.
   * Without it, such an agent fails with a `ConfigurationError`.
   */
  defaultModel?: string;
  /** The adapter's id. Default: `ai-sdk`. */
  id?: string;
  /** Use `streamText` and report `text-delta` events. Default: true. */
  streaming?: boolean;
  /** Retries of the AI SDK itself. Default: the AI SDK's (2). */
  maxRetries?: number;
  /** Provider-specific options passed through as `providerOptions`. */
  providerOptions?: Record<string, Record<string, unknown>>;
  /** Extra HTTP headers for providers that make HTTP calls. */
  headers?: Record<string, string>;
}

/** The description {@link AiSdkSettings} are checked against (`aiSdkAdapter`, `adapterFromEnv`'s `aiSdk`). */
export const aiSdkSettings = defineOptions<AiSdkSettings>('aiSdkAdapter', {
  defaultModel: check('a model id', (v) => typeof v === 'string' && v.trim() !== ''),
  id: string,
  streaming: boolean,
  maxRetries: nonNegativeInteger,
  providerOptions: object,
  headers: object,
});
