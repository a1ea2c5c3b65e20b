/**
 * The settings of the OpenAI-compatible adapter that need no type of the
 * `openai` package, in a module of their own so that
 * `troupe/adapters/env` (which takes them) type-checks without the
 * optional peer installed.
 * @module
 */
import { boolean, check, defineOptions, nonNegativeInteger, object, positiveNumber, string } from '../core/options.js';

/** The options of `openaiAdapter` but a ready `client`: what `adapterFromEnv` can merge in. */
export interface OpenAISettings {
  /** The adapter's id. Default: `openai`. */
  id?: string;
  /** The server's base URL, e.g. `http://localhost:11434/v1` for Ollama. Default: the SDK's (OpenAI, or `OPENAI_BASE_URL`). */
  baseURL?: string;
  /** The API key. Default: the SDK's (`OPENAI_API_KEY`); a placeholder when a `baseURL` is set and no key exists, since local servers do not check it. */
  apiKey?: string;
  /** The model when the session spec names none. */
  model?: string;
  /**
   * Retries of the SDK itself on connection errors, 408, 409, 429 and 5xx.
   * Default: the SDK's (2). Behind `rateLimited(...)`, set 0 so that a 429
   * reaches the limiter (as a `RateLimitError`), which holds every session.
   */
  maxRetries?: number;
  /** Time limit of one HTTP request in ms, enforced by the SDK. Default: the SDK's (10 minutes). */
  timeoutMs?: number;
  /** Stream turns (`stream: true`) and report `text-delta` events. Default: true. */
  streaming?: boolean;
  /** Extra HTTP headers on every request (OpenRouter's `HTTP-Referer`, ...). */
  headers?: Record<string, string>;
  /** Extra fields merged into every request body (provider-specific settings). */
  extraBody?: Record<string, unknown>;
}

/** The description {@link OpenAISettings} are checked against (`openaiAdapter`, `adapterFromEnv`'s `openai`). */
export const openAISettings = defineOptions<OpenAISettings>('openaiAdapter', {
  id: string,
  baseURL: check('a URL', (v) => typeof v === 'string' && URL.canParse(v)),
  apiKey: string,
  model: string,
  maxRetries: nonNegativeInteger,
  timeoutMs: positiveNumber,
  streaming: boolean,
  headers: object,
  extraBody: object,
});
