/**
 * Options checked from one description: unknown keys are refused with the
 * nearest valid name, so a misspelt option never falls back to its default.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import { ConfigurationError, describeValue } from '../../core/errors.js';

/** Refuse an options object that is not one, or that has a key not in `known`, naming the nearest known key. */
export function checkKeys(what: string, options: unknown, known: readonly string[]): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new ConfigurationError(`Expected ${what} options to be an object, got ${describeValue(options)}`);
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = nearest(key, known);
    throw new ConfigurationError(`Unknown option \`${key}\` of ${what}${near ? `: did you mean \`${near}\`?` : ''} (options: ${known.join(', ')})`, { details: { option: key } });
  }
}

/** The known name closest to `key` by edit distance, when it is close enough to be a typo. */
function nearest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const name of known) {
    const d = distance(key.toLowerCase(), name.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best;
}

/** Levenshtein distance (two rows; the names are short). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}

/** Throw unless `value` is undefined or a function. */
export function expectFunction(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') throw new ConfigurationError(`Expected \`${name}\` to be a function, got ${describeValue(value)}`);
}
