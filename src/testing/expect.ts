/**
 * The few matchers the conformance suites use, written on `node:assert` so
 * that the suites run under any test runner and load none. They follow
 * vitest's meaning: `toEqual` ignores properties that are `undefined`,
 * `toMatchObject` checks a subset.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';

type Constructor = abstract new (...args: never[]) => unknown;

/** `expect.any(Type)`: matches any value of that type inside `toEqual` and `toMatchObject`. */
class AnyOf {
  constructor(readonly type: Constructor) {}
  matches(value: unknown): boolean {
    const primitive = new Map<unknown, string>([[String, 'string'], [Number, 'number'], [Boolean, 'boolean'], [BigInt, 'bigint'], [Symbol, 'symbol'], [Function, 'function']]);
    const name = primitive.get(this.type);
    if (name !== undefined && typeof value === name) return true;
    if (this.type === Object) return typeof value === 'object' && value !== null;
    return value instanceof this.type;
  }
}

/** Matchers on a value. */
export interface Matchers {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toBeUndefined(): void;
  toContain(item: unknown): void;
  toMatchObject(expected: object): void;
  toBeInstanceOf(type: Constructor): void;
  /** The same checks, negated. */
  readonly not: Pick<Matchers, 'toBe' | 'toEqual' | 'toContain'>;
}

/** Matchers on what a promise rejects with. */
export interface RejectionMatchers {
  toBe(expected: unknown): Promise<void>;
  toEqual(expected: unknown): Promise<void>;
  toMatchObject(expected: object): Promise<void>;
  toBeInstanceOf(type: Constructor): Promise<void>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Drop properties whose value is `undefined`, in plain objects and arrays, recursively. */
function withoutUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefined);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => [k, withoutUndefined(v)]));
}

/** vitest's `toEqual`: deep equality that ignores `undefined` properties and honours `expect.any`. */
function equals(actual: unknown, expected: unknown): boolean {
  if (expected instanceof AnyOf) return expected.matches(actual);
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => equals(actual[i], e));
  if (isPlainObject(expected) && isPlainObject(actual)) {
    const defined = (o: Record<string, unknown>) => Object.keys(o).filter((k) => o[k] !== undefined).sort();
    const keys = defined(expected);
    return isDeepStrictEqual(keys, defined(actual)) && keys.every((k) => equals(actual[k], expected[k]));
  }
  return isDeepStrictEqual(withoutUndefined(actual), withoutUndefined(expected));
}

function matchesObject(actual: unknown, expected: unknown): boolean {
  if (expected instanceof AnyOf) return expected.matches(actual);
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => matchesObject(actual[i], e));
  }
  if (isPlainObject(expected)) {
    if (typeof actual !== 'object' || actual === null) return false;
    const record = actual as Record<string, unknown>;
    return Object.entries(expected).every(([k, v]) => k in record && matchesObject(record[k], v));
  }
  return isDeepStrictEqual(actual, expected);
}

function contains(actual: unknown, item: unknown): boolean {
  return typeof actual === 'string' ? typeof item === 'string' && actual.includes(item) : Array.isArray(actual) && actual.includes(item);
}

function matchers(actual: unknown): Omit<Matchers, 'not'> {
  return {
    toBe: (expected) => assert.equal(actual, expected),
    toEqual: (expected) => {
      if (equals(actual, expected)) return;
      assert.deepEqual(withoutUndefined(actual), withoutUndefined(expected)); // fails with a diff
      assert.fail(`Expected ${describe(actual)} to equal ${describe(expected)}`);
    },
    toBeUndefined: () => assert.equal(actual, undefined),
    toContain: (item) => assert.ok(contains(actual, item), `Expected ${describe(actual)} to contain ${describe(item)}`),
    toMatchObject: (expected) => assert.ok(matchesObject(actual, expected), `Expected ${describe(actual)} to match ${describe(expected)}`),
    toBeInstanceOf: (type) => assert.ok(actual instanceof type, `Expected ${describe(actual)} to be an instance of ${type.name}`),
  };
}

function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * `expect(value).toEqual(...)`, `expect(promise).rejects.toMatchObject(...)`,
 * `expect.any(String)`: the matchers of the conformance suites.
 */
export function expect(actual: unknown): Matchers & { readonly rejects: RejectionMatchers } {
  const positive = matchers(actual);
  const rejection = async (): Promise<unknown> => {
    try {
      await actual;
    } catch (error) {
      return error;
    }
    return assert.fail('Expected the promise to reject, but it resolved');
  };
  return {
    ...positive,
    not: {
      toBe: (expected) => assert.notEqual(actual, expected),
      toEqual: (expected) => assert.ok(!equals(actual, expected), `Expected ${describe(actual)} not to equal ${describe(expected)}`),
      toContain: (item) => assert.ok(!contains(actual, item), `Expected ${describe(actual)} not to contain ${describe(item)}`),
    },
    rejects: {
      toBe: async (expected) => matchers(await rejection()).toBe(expected),
      toEqual: async (expected) => matchers(await rejection()).toEqual(expected),
      toMatchObject: async (expected) => matchers(await rejection()).toMatchObject(expected),
      toBeInstanceOf: async (type) => matchers(await rejection()).toBeInstanceOf(type),
    },
  };
}

/** Matches any value of `type` (`String`, `Number`, a class) inside `toEqual` and `toMatchObject`. */
expect.any = (type: Constructor | typeof String | typeof Number | typeof Boolean): unknown => new AnyOf(type as Constructor);
