/**
 * Helpers shared by the stores: key checks, JSON encoding, and a per-key
 * queue that serialises writes.
 * @module
 */
import { createHash } from 'node:crypto';
import { raceAbort, throwIfAborted } from './abort.js';
import { StoreError, describeValue, errorMessage } from './errors.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Throw a {@link StoreError} unless `key` is a non-empty, well-formed string. */
export function checkKey(key: unknown, what: 'key' | 'stream' | 'prefix' = 'key'): asserts key is string {
  if (typeof key !== 'string' || (what !== 'prefix' && key === '')) {
    throw new StoreError(`Expected the ${what} to be a non-empty string, got ${describeValue(key)}`, { details: { [what]: key } });
  }
  if (LONE_SURROGATE.test(key)) {
    throw new StoreError(`The ${what} ${describeValue(key)} holds a lone surrogate and cannot be stored`, { details: { [what]: key } });
  }
}

/** `value` as JSON text; a {@link StoreError} when it is not JSON-serialisable. */
export function toJsonText(value: unknown, where: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new StoreError(`The value for ${where} is not JSON-serialisable: ${errorMessage(error)}`, { cause: error, details: { key: where } });
  }
  if (text === undefined) {
    throw new StoreError(`The value for ${where} is not JSON-serialisable (got ${describeValue(value)})`, { details: { key: where } });
  }
  return text;
}

/** Validate the `from` option of a read. */
export function readFrom(from: number | undefined): number {
  if (from === undefined) return 0;
  if (!Number.isInteger(from) || from < 0) {
    throw new StoreError(`Expected \`from\` to be a non-negative integer, got ${describeValue(from)}`, { details: { from } });
  }
  return from;
}

/** The version of a stored document: the SHA-1 of its JSON text, in hex (what Redis' `redis.sha1hex` gives too). */
export function versionOf(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

/** Validate the `ifVersion` option of a `setIf`. */
export function checkIfVersion(ifVersion: unknown): asserts ifVersion is string | null {
  if (ifVersion === null || (typeof ifVersion === 'string' && ifVersion !== '')) return;
  throw new StoreError(`Expected \`ifVersion\` to be a version string or null, got ${describeValue(ifVersion)}`, { details: { ifVersion } });
}

/**
 * Runs jobs one at a time per name, in call order. A job whose signal aborts
 * while it waits is skipped; the caller's promise rejects as soon as the
 * signal aborts. One queue per store instance: no global state.
 */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Run `job` after every earlier job of `name` has settled. */
  run<T>(name: string, signal: AbortSignal | undefined, job: () => Promise<T>): Promise<T> {
    throwIfAborted(signal);
    const previous = this.#tails.get(name) ?? Promise.resolve();
    const result = previous.then(() => {
      throwIfAborted(signal);
      return job();
    });
    const tail = result.catch(() => undefined);
    this.#tails.set(name, tail);
    void tail.then(() => {
      if (this.#tails.get(name) === tail) this.#tails.delete(name);
    });
    return raceAbort(result, signal);
  }
}
