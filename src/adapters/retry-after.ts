/**
 * Reading a provider's rate-limit refusal: HTTP 429 and how long it asked
 * to wait (`retry-after-ms`, or `Retry-After` in seconds or as an HTTP date).
 * @module
 */

/** Something with headers: a `Headers` object or a plain record. */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined> | undefined | null;

function header(source: HeaderSource, name: string): string | undefined {
  if (!source) return undefined;
  if (typeof (source as { get?: unknown }).get === 'function') return (source as { get(name: string): string | null }).get(name) ?? undefined;
  const record = source as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

const MAX_WAIT_MS = 24 * 60 * 60 * 1000;

/**
 * How long a 429 asked to wait, in ms: `retry-after-ms` (OpenAI's), else
 * `Retry-After` as seconds or as an HTTP date (measured from `now`).
 * Undefined when neither is there or readable; capped at a day.
 */
export function retryAfterMs(headers: HeaderSource, now: number = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Math.min(Number(ms), MAX_WAIT_MS);
  const value = header(headers, 'retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.min(seconds * 1000, MAX_WAIT_MS) : undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(at - now, 0), MAX_WAIT_MS);
}
