/**
 * Options, described once and checked from the description. Every public
 * function and constructor that takes an options object describes it with
 * {@link defineOptions}: each key with its {@link OptionCheck}. Checking
 * refuses a key the description does not know with `invalid_option`,
 * naming it and the nearest valid key ("did you mean `maxParallel`?"), and
 * names the option and the bad value for a value of the wrong kind
 * ("Expected `maxParallel` to be a positive integer, got -1 (number)").
 * Each check accepts `undefined` (the option was left out) unless wrapped
 * in {@link required}. docs/conventions.md has the words options use.
 * @module
 */
import { ConfigurationError, describeValue } from './errors.js';

/** Checks one option's value; throws a `ConfigurationError` naming `name` when it is wrong. `undefined` means left out. */
export type OptionCheck = (name: string, value: unknown) => void;

/** A description of an options type `T`: one check (or nested description) per key, every key of `T` included. */
export type OptionsShape<T> = { readonly [K in keyof T]-?: OptionCheck | OptionsDescription<NonNullable<T[K]>> };

/** An options type, described once: {@link OptionsDescription.check} checks a value against it. */
export interface OptionsDescription<T> {
  /** What takes these options, for messages: `executePlan`, `agent`. */
  readonly of: string;
  /** The keys it knows. */
  readonly keys: readonly string[];
  /** The shape it was made from (spread it into another description to extend it). */
  readonly shape: OptionsShape<T>;
  /**
   * Check `options` (undefined is an empty options object) and return it:
   * an unknown key or a bad value throws a `ConfigurationError`
   * (`invalid_option`). `prefix` names a nested group (`retry.`) and
   * `owner` what takes the outer options, for messages.
   */
  check<V extends T | undefined>(options: V, prefix?: string, owner?: string): V;
}

/**
 * Describe an options type: `shape` has one entry per key of `T` (the
 * compiler checks that none is missing), each an {@link OptionCheck} or the
 * description of a nested group.
 *
 * @example
 * ```ts
 * const retryOptions = defineOptions<RetryOptions>('retry', { maxRetries: nonNegativeInteger, delayMs: nonNegativeNumber });
 * const planOptions = defineOptions<PlanOptions>('executePlan', { maxParallel: positiveInteger, retry: retryOptions, signal: abortSignal });
 * planOptions.check(options); // throws on `maxParalel`: did you mean `maxParallel`?
 * ```
 */
export function defineOptions<T extends object>(of: string, shape: OptionsShape<T>): OptionsDescription<T> {
  const keys = Object.keys(shape);
  const known = new Set(keys);
  // Compiled once: per key its check or nested description; whether a value left out may be skipped (a
  // nested group, or a check known to accept undefined); and for a given value, a test that passing
  // (a kind tested here, or the predicate of a `check`) means the check would pass. A value that does not
  // pass the test goes to the check itself, for its message. The checks run in the order of `keys`.
  const entries = keys.map((key) => {
    const entry = (shape as Record<string, OptionCheck | OptionsDescription<object>>)[key]!;
    if (typeof entry !== 'function') return { key, check: undefined, nested: entry, skipUndefined: true, kind: Kind.none, test: undefined };
    const given = requiredInner.get(entry) ?? entry;
    return { key, check: entry, nested: undefined, skipUndefined: acceptsUndefined.has(entry), kind: kinds.get(given) ?? Kind.none, test: predicates.get(given) };
  });
  const description: OptionsDescription<T> = {
    of,
    keys,
    shape,
    check<V extends T | undefined>(options: V, prefix = '', owner = of): V {
      if (options === undefined) return options;
      if (options === null || typeof options !== 'object' || Array.isArray(options)) {
        const what = prefix === '' ? `the options of ${owner}` : `\`${prefix.slice(0, -1)}\``;
        throw new ConfigurationError(`Expected ${what} to be an object, got ${describeValue(options)}`);
      }
      // The own enumerable keys, in the order Object.keys gives them, without building the list.
      const own = Object.keys(options);
      for (let i = 0; i < own.length; i++) {
        const key = own[i]!;
        if (!known.has(key)) throw unknownOption(owner, prefix + key, nearest(key, keys), prefix);
      }
      const values = options as Record<string, unknown>;
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i]!;
        const value = values[entry.key];
        if (value === undefined) {
          // A check sees undefined too (`required` refuses it) unless it is known to accept it; a nested group left out is not checked.
          if (!entry.skipUndefined) entry.check!(prefix === '' ? entry.key : prefix + entry.key, value);
          continue;
        }
        if (entry.nested !== undefined) entry.nested.check(value as object, `${prefix}${entry.key}.`, owner);
        else if (!passes(entry.kind, value) && !(entry.test !== undefined && entry.test(value))) entry.check!(prefix === '' ? entry.key : prefix + entry.key, value);
      }
      return options;
    },
  };
  return description;
}

/** Kinds of value the common checks want, tested without a call: see {@link passes}. */
const enum Kind {
  none,
  anything,
  string,
  nonEmptyString,
  boolean,
  func,
  object,
  positiveInteger,
  nonNegativeInteger,
  positiveNumber,
  nonNegativeNumber,
  abortSignal,
}

/** True when a value (not undefined) surely passes the checks of `kind`; false when the check must look. */
function passes(kind: Kind, value: unknown): boolean {
  switch (kind) {
    case Kind.none:
      return false;
    case Kind.anything:
      return true;
    case Kind.string:
      return typeof value === 'string';
    case Kind.nonEmptyString:
      return typeof value === 'string' && value !== '';
    case Kind.boolean:
      return typeof value === 'boolean';
    case Kind.func:
      return typeof value === 'function';
    case Kind.object:
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case Kind.positiveInteger:
      return typeof value === 'number' && Number.isInteger(value) && value > 0;
    case Kind.nonNegativeInteger:
      return typeof value === 'number' && Number.isInteger(value) && value >= 0;
    case Kind.positiveNumber:
      return typeof value === 'number' && Number.isFinite(value) && value > 0;
    case Kind.nonNegativeNumber:
      return typeof value === 'number' && Number.isFinite(value) && value >= 0;
    case Kind.abortSignal:
      return value instanceof AbortSignal;
  }
}

/** The kind each common check tests (set where they are defined). */
const kinds = new WeakMap<OptionCheck, Kind>();

/** The check each `required(check)` wraps. */
const requiredInner = new WeakMap<OptionCheck, OptionCheck>();

/** `c`, known to test `kind`. */
function ofKind(kind: Kind, c: OptionCheck): OptionCheck {
  kinds.set(c, kind);
  return c;
}

/** The checks known to accept `undefined` (every check made here but `required`'s): an option left out skips them. */
const acceptsUndefined = new WeakSet<OptionCheck>();

/** Mark `c` as accepting `undefined` without a look (it must: `c(name, undefined)` returns). */
function lenient(c: OptionCheck): OptionCheck {
  acceptsUndefined.add(c);
  return c;
}

/**
 * A check that skips `undefined` and hands any other value to `inner`:
 * for a check of its own (a validator that throws its own message), so an
 * option left out costs nothing.
 */
export function optional(inner: (name: string, value: unknown) => void): OptionCheck {
  return lenient((name, value) => {
    if (value !== undefined) inner(name, value);
  });
}

function unknownOption(of: string, name: string, suggestion: string | undefined, prefix: string): ConfigurationError {
  const hint = suggestion === undefined ? '' : `; did you mean \`${prefix}${suggestion}\`?`;
  return new ConfigurationError(`Unknown option \`${name}\` of ${of}${hint}`, {
    details: { option: name, of, ...(suggestion === undefined ? {} : { suggestion: prefix + suggestion }) },
  });
}

/**
 * The known key nearest to `key`: the same word in another case, else the
 * smallest edit distance (insertions, deletions, substitutions and swaps of
 * neighbours) within a third of the key's length (at least 2).
 */
export function nearest(key: string, keys: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const sameWord = keys.find((k) => k.toLowerCase() === lower);
  if (sameWord !== undefined) return sameWord;
  const limit = Math.max(2, Math.ceil(key.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of keys) {
    if (Math.abs(candidate.length - key.length) > limit) continue;
    const d = editDistance(lower, candidate.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance, giving up (returning `stop`) once every path exceeds `stop - 1`. Linear memory. */
function editDistance(a: string, b: string, stop: number): number {
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = new Array<number>(b.length + 1);
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      current[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin >= stop) return stop;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

// ---------------------------------------------------------------------------
// Checks. Each accepts `undefined`; `required(check)` refuses it.

/** A check that throws unless `ok(value)`, with "Expected `<name>` to be <what>, got <value>". */
export function check(what: string, ok: (value: unknown) => boolean): OptionCheck {
  const c: OptionCheck = (name, value) => {
    if (value !== undefined && !ok(value)) throw new ConfigurationError(`Expected \`${name}\` to be ${what}, got ${describeValue(value)}`);
  };
  predicates.set(c, ok);
  return lenient(c);
}

/** The test of each check made by {@link check}: a list runs it on its items and names an item only when it fails. */
const predicates = new WeakMap<OptionCheck, (value: unknown) => boolean>();

/** `check`, and `undefined` refused too. */
export function required(inner: OptionCheck): OptionCheck {
  const c: OptionCheck = (name, value) => {
    if (value === undefined) throw new ConfigurationError(`Expected \`${name}\` to be given`);
    inner(name, value);
  };
  requiredInner.set(c, inner);
  return c;
}

/** Anything: the option is checked where it is used (or its type says all there is). */
export const anything: OptionCheck = ofKind(Kind.anything, lenient(() => undefined));

/** Throw unless `value` is undefined or a positive integer. */
export function expectPositiveInteger<T>(name: string, value: T): T {
  if (value !== undefined && !(Number.isInteger(value) && (value as number) > 0)) {
    throw new ConfigurationError(`Expected \`${name}\` to be a positive integer, got ${describeValue(value)}`);
  }
  return value;
}

/** Throw unless `value` is undefined or a non-negative integer. */
export function expectNonNegativeInteger<T>(name: string, value: T): T {
  if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) {
    throw new ConfigurationError(`Expected \`${name}\` to be a non-negative integer, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Throw unless `value` is undefined or a positive, finite number. Infinity is
 * refused: leave a time-out out for no limit. Finite values of any size
 * work (the clock chains timers past Node's 2^31 - 1 ms). An option whose
 * name ends in `Ms` is a duration, and the message says so.
 */
export function expectPositiveNumber<T>(name: string, value: T): T {
  if (value === undefined || (typeof value === 'number' && Number.isFinite(value) && value > 0)) return value;
  throw nonFinite(name, value) ?? new ConfigurationError(`Expected \`${name}\` to be a positive number, got ${describeValue(value)}`);
}

/** Throw unless `value` is undefined or a finite number of at least 0 (a duration of 0: at once). */
export function expectNonNegativeNumber<T>(name: string, value: T): T {
  if (value === undefined || (typeof value === 'number' && Number.isFinite(value) && value >= 0)) return value;
  throw nonFinite(name, value) ?? new ConfigurationError(`Expected \`${name}\` to be a non-negative number, got ${describeValue(value)}`);
}

/**
 * The error for Infinity and NaN: "a finite number (of milliseconds)", and
 * for an infinite time-out (`timeoutMs`, `idleTimeoutMs`, ...), how to ask
 * for none: leave it out. Other options (a weight, a delay) say no more:
 * leaving them out gives their default, not "no limit".
 */
function nonFinite(name: string, value: unknown): ConfigurationError | undefined {
  if (typeof value !== 'number' || Number.isFinite(value)) return undefined;
  const unit = name.endsWith('Ms') ? ' of milliseconds' : '';
  const hint = value === Infinity && /timeoutMs$/i.test(name) ? '; leave it out for no time-out' : '';
  return new ConfigurationError(`Expected \`${name}\` to be a finite number${unit}, got ${describeValue(value)}${hint}`);
}

/** A positive integer (`maxParallel`, `maxTurns`). */
export const positiveInteger: OptionCheck = ofKind(Kind.positiveInteger, lenient((name, value) => void expectPositiveInteger(name, value)));
/** A non-negative integer (`maxRetries`). */
export const nonNegativeInteger: OptionCheck = ofKind(Kind.nonNegativeInteger, lenient((name, value) => void expectNonNegativeInteger(name, value)));
/** A positive, finite number (`timeoutMs`). */
export const positiveNumber: OptionCheck = ofKind(Kind.positiveNumber, lenient((name, value) => void expectPositiveNumber(name, value)));
/** A finite number of at least 0 (`delayMs`). */
export const nonNegativeNumber: OptionCheck = ofKind(Kind.nonNegativeNumber, lenient((name, value) => void expectNonNegativeNumber(name, value)));
/** A number from 0 to 1 (a score, a share). */
export const fraction: OptionCheck = check('a number from 0 to 1', (v) => typeof v === 'number' && v >= 0 && v <= 1);
/** A finite number. */
export const finiteNumber: OptionCheck = check('a finite number', (v) => typeof v === 'number' && Number.isFinite(v));
/** `true` or `false`. */
export const boolean: OptionCheck = ofKind(Kind.boolean, check('a boolean', (v) => typeof v === 'boolean'));
/** A string. */
export const string: OptionCheck = ofKind(Kind.string, check('a string', (v) => typeof v === 'string'));
/** A string with at least one character. */
export const nonEmptyString: OptionCheck = ofKind(Kind.nonEmptyString, check('a non-empty string', (v) => typeof v === 'string' && v !== ''));
/** A function. */
export const func: OptionCheck = ofKind(Kind.func, check('a function', (v) => typeof v === 'function'));
/** An object (not null, not an array). */
export const object: OptionCheck = ofKind(Kind.object, check('an object', (v) => typeof v === 'object' && v !== null && !Array.isArray(v)));
/** An `AbortSignal`. */
export const abortSignal: OptionCheck = ofKind(Kind.abortSignal, check('an AbortSignal', (v) => typeof v === 'object' && v !== null && typeof (v as AbortSignal).aborted === 'boolean' && typeof (v as AbortSignal).addEventListener === 'function'));

/** The methods each kind of object below must have. */
const clockMethods = ['now', 'setTimer'];
const storeMethods = ['get', 'set', 'delete', 'list', 'append', 'read'];
const adapterMethods = ['openSession'];
const runnableMethods = ['run'];

/** A `Clock` (`now()` and `setTimer()`). */
export const clock: OptionCheck = check('a Clock (with now() and setTimer())', (v) => hasMethods(v, clockMethods));
/** A `Store` (`get`, `set`, `delete`, `list`, `append`, `read`). */
export const store: OptionCheck = check('a store (get, set, delete, list, append and read)', (v) => hasMethods(v, storeMethods));
/** A `ModelAdapter` (`openSession()`). */
export const adapter: OptionCheck = check('a model adapter (with openSession())', (v) => hasMethods(v, adapterMethods));
/** A runnable (`name` and `run()`). */
export const runnable: OptionCheck = check('a runnable (with a name and run())', (v) => hasMethods(v, runnableMethods) && typeof (v as { name?: unknown }).name === 'string');

/** One of `values`. */
export function oneOf(values: readonly unknown[]): OptionCheck {
  return check(`one of ${values.map((v) => JSON.stringify(v)).join(', ')}`, (v) => values.includes(v));
}

/** A list whose every item passes `item` (checked as `<name>[i]`). */
export function listOf(item: OptionCheck): OptionCheck {
  const ok = predicates.get(item);
  return lenient((name, value) => {
    if (value === undefined) return;
    if (!Array.isArray(value)) throw new ConfigurationError(`Expected \`${name}\` to be a list, got ${describeValue(value)}`);
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      // Holes are skipped (as forEach does); an item's name is built only for a check that needs it: one that fails, or one of another kind.
      if (ok === undefined ? i in value : v !== undefined && !ok(v)) item(`${name}[${i}]`, v);
    }
  });
}

/** Passes when any of `checks` passes; the message is `what`. */
export function either(what: string, ...checks: OptionCheck[]): OptionCheck {
  return lenient((name, value) => {
    if (value === undefined) return;
    for (const c of checks) {
      try {
        c(name, value);
        return;
      } catch {
        // try the next
      }
    }
    throw new ConfigurationError(`Expected \`${name}\` to be ${what}, got ${describeValue(value)}`);
  });
}

function hasMethods(value: unknown, methods: readonly string[]): boolean {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  for (const m of methods) if (typeof (value as Record<string, unknown>)[m] !== 'function') return false;
  return true;
}

