/**
 * `@opentelemetry/api`, loaded on first use: `troupe/otel` imports without
 * it, and a call that needs it says which package to install
 * (`missing_dependency`) instead of failing the import with Node's
 * `ERR_MODULE_NOT_FOUND`. Loaded with `require`, which `@opentelemetry/api`
 * supports in both module systems; its providers live in one global
 * registry, so the copy loaded here sees what the application registered.
 * @module
 */
import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import { ConfigurationError, errorMessage } from '../../core/errors.js';

const NOT_FOUND = new Set(['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND']);

/** The API, once loaded (a module cache, as `import` keeps one). */
let api: typeof OtelApi | undefined;

/** `@opentelemetry/api`, or a `missing_dependency` error naming `usedBy` and the install line. */
export function otelApi(usedBy: string): typeof OtelApi {
  if (api) return api;
  try {
    // `__filename` in the CommonJS build (whose `import.meta.url` is undefined), the module's URL in ESM.
    const here = typeof __filename === 'string' ? __filename : import.meta.url;
    api = createRequire(here)('@opentelemetry/api') as typeof OtelApi;
    return api;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const why = typeof code === 'string' && NOT_FOUND.has(code) ? `run \`npm install @opentelemetry/api\`` : errorMessage(error);
    throw new ConfigurationError(`${usedBy} needs the optional package "@opentelemetry/api": ${why}`, {
      code: 'missing_dependency',
      cause: error,
      details: { package: '@opentelemetry/api' },
    });
  }
}
