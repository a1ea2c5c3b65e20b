import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { defineOptions, listOf, nearest, nonNegativeInteger, nonNegativeNumber, oneOf, positiveInteger, required, string, abortSignal } from '../../src/core/options.js';

interface Retry {
  maxRetries?: number;
  delayMs?: number;
}
interface PlanLike {
  maxParallel?: number;
  retry?: Retry;
  mode?: 'a' | 'b';
  tags?: string[];
  signal?: AbortSignal;
}
const retry = defineOptions<Retry>('retry', { maxRetries: nonNegativeInteger, delayMs: nonNegativeNumber });
const plan = defineOptions<PlanLike>('executePlan', { maxParallel: positiveInteger, retry, mode: oneOf(['a', 'b']), tags: listOf(string), signal: abortSignal });

const thrown = (fn: () => unknown): ConfigurationError => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('did not throw');
};

describe('defineOptions', () => {
  it('passes good options through, and undefined as no options', () => {
    const options = { maxParallel: 2, retry: { maxRetries: 0, delayMs: 10 }, mode: 'a' as const, tags: ['x'], signal: new AbortController().signal };
    expect(plan.check(options)).toBe(options);
    expect(plan.check(undefined)).toBeUndefined();
    expect(plan.check({})).toEqual({});
    expect(plan.check({ maxParallel: undefined })).toEqual({ maxParallel: undefined });
  });

  it('refuses an unknown key with invalid_option, naming it and the nearest valid key', () => {
    const error = thrown(() => plan.check({ maxParalel: 2 } as PlanLike));
    expect(error.code).toBe('invalid_option');
    expect(error.message).toBe('Unknown option `maxParalel` of executePlan; did you mean `maxParallel`?');
    expect(error.details).toEqual({ option: 'maxParalel', of: 'executePlan', suggestion: 'maxParallel' });
  });

  it('names a nested unknown key by its path, with the nested suggestion', () => {
    const error = thrown(() => plan.check({ retry: { maxRetry: 1 } } as PlanLike));
    expect(error.message).toBe('Unknown option `retry.maxRetry` of executePlan; did you mean `retry.maxRetries`?');
  });

  it('says nothing more when no key is near', () => {
    expect(thrown(() => plan.check({ colour: 'red' } as PlanLike)).message).toBe('Unknown option `colour` of executePlan');
  });

  it('names the option and the bad value', () => {
    expect(thrown(() => plan.check({ maxParallel: -1 })).message).toBe('Expected `maxParallel` to be a positive integer, got -1 (number)');
    expect(thrown(() => plan.check({ retry: { delayMs: Infinity } })).message).toBe('Expected `retry.delayMs` to be a finite number of milliseconds, got Infinity (number)');
    expect(thrown(() => plan.check({ mode: 'c' as 'a' })).message).toBe('Expected `mode` to be one of "a", "b", got "c" (string)');
    expect(thrown(() => plan.check({ tags: ['x', 3 as unknown as string] })).message).toBe('Expected `tags[1]` to be a string, got 3 (number)');
    expect(thrown(() => plan.check({ signal: {} as AbortSignal })).message).toMatch(/^Expected `signal` to be an AbortSignal/);
  });

  it('refuses options that are not an object', () => {
    expect(thrown(() => plan.check(3 as PlanLike)).message).toBe('Expected the options of executePlan to be an object, got 3 (number)');
    expect(thrown(() => plan.check({ retry: [] as Retry })).message).toBe('Expected `retry` to be an object, got [] (array)');
  });

  it('required refuses a missing value', () => {
    const named = defineOptions<{ name: string }>('agent', { name: required(string) });
    expect(thrown(() => named.check({} as { name: string })).message).toBe('Expected `name` to be given');
  });

  it('extends a description by spreading its shape', () => {
    const session = defineOptions<PlanLike & { task?: string }>('PlanningSession', { ...plan.shape, task: string });
    expect(session.keys).toContain('maxParallel');
    expect(thrown(() => session.check({ tsak: 'x' } as PlanLike)).message).toBe('Unknown option `tsak` of PlanningSession; did you mean `task`?');
  });
});

describe('nearest', () => {
  const keys = ['maxParallel', 'maxRetries', 'delayMs', 'signal', 'store'];
  it('finds a typo, a swap, a case slip', () => {
    expect(nearest('maxParalel', keys)).toBe('maxParallel');
    expect(nearest('dleayMs', keys)).toBe('delayMs');
    expect(nearest('MaxParallel', keys)).toBe('maxParallel');
    expect(nearest('sotre', keys)).toBe('store');
  });
  it('finds nothing far away', () => {
    expect(nearest('budget', keys)).toBeUndefined();
  });
  it('is quick and total on any key (bounded distance, linear memory)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 2000 }), (key) => {
        const found = nearest(key, keys);
        expect(found === undefined || keys.includes(found)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
