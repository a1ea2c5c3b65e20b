/**
 * `storeSuite`: the conformance suite every store must pass.
 * @module
 */
import { CancelledError, StoreError } from '../core/errors.js';
import { supportsCompareAndSet, type Store } from '../core/store.js';
import { anything, defineOptions } from '../core/options.js';
import { expect } from './expect.js';
import { resolveRunner, type SuiteRunner } from './runner.js';

/** Keys that a naive store would turn into paths outside its storage, or mangle. */
export const adversarialKeys: readonly string[] = [
  '../escape',
  '../../etc/passwd',
  '/absolute/path',
  'a\\b\\..\\..\\c',
  'nul\u0000byte',
  'UPPER/lower',
  'Upper/lower',
  '.hidden',
  '..',
  'a/./b',
  'a//b',
  'trailing/',
  'x.json',
  'x.json/inner',
  'x.jsonl',
  '%41 percent',
  'unicode/é/日本',
  'spaces and :*?"<>|',
];

/** Options of {@link storeSuite}. */
export interface StoreSuiteOptions {
  /** The test runner's `describe` and `it` (vitest's or `node:test`'s). Default: global `describe` and `it`. */
  runner?: SuiteRunner;
}

const storeSuiteOptions = defineOptions<StoreSuiteOptions>('storeSuite', { runner: anything });

/**
 * Register the conformance tests for a store with your test runner.
 * `factory` returns a new, empty store for each test; the tests cover
 * documents, key encoding, ordering of concurrent writes, streams and
 * cancellation (an aborted call rejects with a `CancelledError`).
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest'; // or 'node:test'
 * storeSuite('redis', async () => redisStore({ connection: url, prefix: `test-${randomUUID()}:` }), { runner: { describe, it } });
 * ```
 */
export function storeSuite(name: string, factory: () => Store | Promise<Store>, options: StoreSuiteOptions = {}): void {
  storeSuiteOptions.check(options);
  const { describe, it } = resolveRunner('storeSuite', options.runner);
  describe(`store conformance: ${name}`, () => {
    documentCases(factory, it);
    streamCases(factory, it);
    abortCases(factory, it);
    compareAndSetCases(factory, { describe, it });
  });
}

/** Cases of the suite (see {@link storeSuite}). */
function documentCases(factory: () => Store | Promise<Store>, it: SuiteRunner['it']): void {
  it('reads back what was set, as a copy; a missing key is undefined', async () => {
    const store = await factory();
    expect(await store.get('missing')).toBeUndefined();
    const value = { a: 1, nested: { list: [1, 'two', null, true] }, text: 'line\nbreak "quoted"' };
    await store.set('doc', value);
    const read = await store.get('doc');
    expect(read).toEqual(value);
    expect(read).not.toBe(value);
    value.a = 2;
    expect(await store.get('doc')).toMatchObject({ a: 1 });
  });

  it('replaces and deletes documents', async () => {
    const store = await factory();
    await store.set('k', { v: 1 });
    await store.set('k', { v: 2 });
    expect(await store.get('k')).toEqual({ v: 2 });
    expect(await store.delete('k')).toBe(true);
    expect(await store.delete('k')).toBe(false);
    expect(await store.get('k')).toBeUndefined();
  });

  it('lists documents by prefix, sorted, without streams', async () => {
    const store = await factory();
    for (const key of ['runs/b/checkpoint', 'runs/a/checkpoint', 'runs/a/meta', 'other', 'runsx']) await store.set(key, key);
    await store.append('runs/a/events', { type: 'x' });
    expect(await store.list('runs/')).toEqual(['runs/a/checkpoint', 'runs/a/meta', 'runs/b/checkpoint']);
    expect(await store.list('runs')).toEqual(['runs/a/checkpoint', 'runs/a/meta', 'runs/b/checkpoint', 'runsx']);
    expect(await store.list('runs/a/m')).toEqual(['runs/a/meta']);
    expect(await store.list('nothing/')).toEqual([]);
  });

  it('keeps adversarial keys apart and lists them as given', async () => {
    const store = await factory();
    for (const [i, key] of adversarialKeys.entries()) await store.set(key, { i });
    for (const [i, key] of adversarialKeys.entries()) expect(await store.get(key)).toEqual({ i });
    expect(await store.list('')).toEqual([...adversarialKeys].sort());
    expect(await store.get('escape')).toBeUndefined();
    expect(await store.get('etc/passwd')).toBeUndefined();
  });

  it('refuses empty keys and values that are not JSON with a StoreError', async () => {
    const store = await factory();
    await expect(store.set('', 1)).rejects.toBeInstanceOf(StoreError);
    await expect(store.set('f', () => 1)).rejects.toBeInstanceOf(StoreError);
    await expect(store.set('b', { big: 1n })).rejects.toBeInstanceOf(StoreError);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    await expect(store.set('c', cycle)).rejects.toBeInstanceOf(StoreError);
    await expect(store.append('s', undefined)).rejects.toBeInstanceOf(StoreError);
    await expect(store.read('s', { from: -1 })).rejects.toBeInstanceOf(StoreError);
    expect(await store.list('')).toEqual([]);
  });

  it('applies concurrent writes to one key in call order', async () => {
    const store = await factory();
    await Promise.all(Array.from({ length: 25 }, (_, i) => store.set('hot', { i, pad: 'x'.repeat(i * 10) })));
    expect(await store.get('hot')).toMatchObject({ i: 24 });
    const mixed = [store.set('m', 1), store.delete('m'), store.set('m', 3)];
    await Promise.all(mixed);
    expect(await store.get('m')).toBe(3);
  });
}

/** Cases of the suite (see {@link storeSuite}). */
function streamCases(factory: () => Store | Promise<Store>, it: SuiteRunner['it']): void {
  it('appends records and reads them in order, from an index', async () => {
    const store = await factory();
    expect(await store.read('empty')).toEqual({ records: [], next: 0 });
    await Promise.all(Array.from({ length: 30 }, (_, i) => store.append('runs/r/events', { i })));
    const all = await store.read('runs/r/events');
    expect(all.records).toEqual(Array.from({ length: 30 }, (_, i) => ({ i })));
    expect(all.next).toBe(30);
    expect(all.torn).toBeUndefined();
    const tail = await store.read('runs/r/events', { from: 28 });
    expect(tail).toEqual({ records: [{ i: 28 }, { i: 29 }], next: 30 });
    expect(await store.read('runs/r/events', { from: 40 })).toEqual({ records: [], next: 40 });
    expect(await store.get('runs/r/events')).toBeUndefined();
  });

  it('keeps streams apart under adversarial names', async () => {
    const store = await factory();
    for (const [i, key] of adversarialKeys.entries()) await store.append(key, { i });
    for (const [i, key] of adversarialKeys.entries()) expect((await store.read(key)).records).toEqual([{ i }]);
  });

  it('deletes a stream when it can', async (t) => {
    const store = await factory();
    if (!store.deleteStream) return t.skip();
    await store.append('s', 1);
    expect(await store.deleteStream('s')).toBe(true);
    expect(await store.deleteStream('s')).toBe(false);
    expect((await store.read('s')).records).toEqual([]);
    await store.append('s', 2);
    expect((await store.read('s')).records).toEqual([2]);
  });
}

/** Cases of the suite (see {@link storeSuite}). */
function abortCases(factory: () => Store | Promise<Store>, it: SuiteRunner['it']): void {
  it('honours an aborted signal on every call, and does nothing', async () => {
    const store = await factory();
    await store.set('kept', 1);
    await store.append('kept-stream', 1);
    const signal = AbortSignal.abort();
    await expect(store.get('kept', { signal })).rejects.toBeInstanceOf(CancelledError);
    await expect(store.set('kept', 2, { signal })).rejects.toBeInstanceOf(CancelledError);
    await expect(store.delete('kept', { signal })).rejects.toBeInstanceOf(CancelledError);
    await expect(store.list('', { signal })).rejects.toBeInstanceOf(CancelledError);
    await expect(store.append('kept-stream', 2, { signal })).rejects.toBeInstanceOf(CancelledError);
    await expect(store.read('kept-stream', { signal })).rejects.toBeInstanceOf(CancelledError);
    if (store.deleteStream) await expect(store.deleteStream('kept-stream', { signal })).rejects.toBeInstanceOf(CancelledError);
    expect(await store.get('kept')).toBe(1);
    expect((await store.read('kept-stream')).records).toEqual([1]);
  });

  it('stays consistent when a write is aborted mid-way', async () => {
    const store = await factory();
    const controller = new AbortController();
    const first = store.set('q', 'first');
    const second = store.set('q', 'second', { signal: controller.signal });
    const settled = second.then(() => undefined, (error: unknown) => error);
    controller.abort();
    await first;
    const outcome = await settled;
    // The write either happened before the abort took effect, or was cancelled.
    if (outcome !== undefined) expect(outcome).toBeInstanceOf(CancelledError);
    expect(['first', 'second']).toContain(await store.get('q'));
    await store.set('q', 'third');
    expect(await store.get('q')).toBe('third');
  });
}

// ---------------------------------------------------------------------------
// Compare-and-set: `getVersioned` and `setIf`, for stores that have them.
// ---------------------------------------------------------------------------

/** The conformance cases of compare-and-set; each skips when the store has no `setIf`. */
function compareAndSetCases(factory: () => Store | Promise<Store>, { describe, it }: SuiteRunner): void {
  describe('compare-and-set', () => {
    versionCases(factory, it);
    concurrencyCases(factory, it);
  });
}

/** Compare-and-set cases; each skips when the store has no `setIf`. */
function versionCases(factory: () => Store | Promise<Store>, it: SuiteRunner['it']): void {
  it('has both getVersioned and setIf, or neither', async () => {
    const store = await factory();
    expect(typeof store.getVersioned).toBe(typeof store.setIf);
  });

  it('reads a document with its version; the version follows the content', async (t) => {
    const store = await factory();
    if (!supportsCompareAndSet(store)) return t.skip();
    expect(await store.getVersioned('missing')).toBeUndefined();
    await store.set('doc', { a: 1 });
    const first = await store.getVersioned('doc');
    expect(first).toEqual({ value: { a: 1 }, version: expect.any(String) });
    expect(first!.version).not.toBe('');
    expect((await store.getVersioned('doc'))!.version).toBe(first!.version);
    await store.set('doc', { a: 2 });
    expect((await store.getVersioned('doc'))!.version).not.toBe(first!.version);
    const value = (await store.getVersioned('doc'))!.value as { a: number };
    value.a = 3;
    expect(await store.get('doc')).toEqual({ a: 2 });
  });

  it('creates only when absent with ifVersion null', async (t) => {
    const store = await factory();
    if (!supportsCompareAndSet(store)) return t.skip();
    const created = await store.setIf('new', { n: 1 }, { ifVersion: null });
    expect(created).toEqual({ ok: true, version: expect.any(String) });
    expect(await store.getVersioned('new')).toEqual({ value: { n: 1 }, version: created.ok ? created.version : '' });
    expect(await store.setIf('new', { n: 2 }, { ifVersion: null })).toEqual({ ok: false });
    expect(await store.get('new')).toEqual({ n: 1 });
    expect(await store.list('')).toEqual(['new']);
  });

  it('writes only over the version it was given', async (t) => {
    const store = await factory();
    if (!supportsCompareAndSet(store)) return t.skip();
    await store.set('k', 'one');
    const v1 = (await store.getVersioned('k'))!.version;
    const written = await store.setIf('k', 'two', { ifVersion: v1 });
    expect(written.ok).toBe(true);
    // A stale version (and a made-up one) changes nothing.
    expect(await store.setIf('k', 'stale', { ifVersion: v1 })).toEqual({ ok: false });
    expect(await store.setIf('k', 'made-up', { ifVersion: 'no-such-version' })).toEqual({ ok: false });
    expect(await store.get('k')).toBe('two');
    // The returned version is the stored one and can be chained.
    const v2 = written.ok ? written.version : '';
    expect((await store.getVersioned('k'))!.version).toBe(v2);
    expect((await store.setIf('k', 'three', { ifVersion: v2 })).ok).toBe(true);
    // A plain set in between makes the version stale.
    const v3 = (await store.getVersioned('k'))!.version;
    await store.set('k', 'four');
    expect(await store.setIf('k', 'five', { ifVersion: v3 })).toEqual({ ok: false });
    expect(await store.get('k')).toBe('four');
  });
}

/** Compare-and-set cases; each skips when the store has no `setIf`. */
function concurrencyCases(factory: () => Store | Promise<Store>, it: SuiteRunner['it']): void {
  it('sees a deleted document as absent', async (t) => {
    const store = await factory();
    if (!supportsCompareAndSet(store)) return t.skip();
    await store.set('gone', 1);
    const version = (await store.getVersioned('gone'))!.version;
    await store.delete('gone');
    expect(await store.setIf('gone', 2, { ifVersion: version })).toEqual({ ok: false });
    expect(await store.get('gone')).toBeUndefined();
    expect((await store.setIf('gone', 3, { ifVersion: null })).ok).toBe(true);
    expect(await store.get('gone')).toBe(3);
  });

  it('loses no update when concurrent read-modify-writes retry on conflict', async (t) => {
    const store = await factory();
    if (!supportsCompareAndSet(store)) return t.skip();
    const increment = async (who: number) => {
      for (;;) {
        const current = await store.getVersioned!('counter');
        const doc = (current?.value as { n: number; by: number[] } | undefined) ?? { n: 0, by: [] };
        const written = await store.setIf!('counter', { n: doc.n + 1, by: [...doc.by, who] }, { ifVersion: current?.version ?? null });
        if (written.ok) return;
      }
    };
    await Promise.all(Array.from({ length: 12 }, (_, i) => increment(i)));
    const final = (await store.get('counter')) as { n: number; by: number[] };
    expect(final.n).toBe(12);
    expect([...final.by].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it('keeps adversarial keys apart', async (t) => {
    const store = await factory();
    if (!supportsCompareAndSet(store)) return t.skip();
    for (const [i, key] of adversarialKeys.entries()) expect((await store.setIf!(key, { i }, { ifVersion: null })).ok).toBe(true);
    for (const [i, key] of adversarialKeys.entries()) expect((await store.getVersioned!(key))!.value).toEqual({ i });
    expect(await store.list('')).toEqual([...adversarialKeys].sort());
  });

  it('refuses bad input with a StoreError and honours an aborted signal', async (t) => {
    const store = await factory();
    if (!supportsCompareAndSet(store)) return t.skip();
    await store.set('kept', 1);
    const version = (await store.getVersioned('kept'))!.version;
    await expect(store.setIf('', 1, { ifVersion: null })).rejects.toBeInstanceOf(StoreError);
    await expect(store.getVersioned('')).rejects.toBeInstanceOf(StoreError);
    await expect(store.setIf('kept', () => 1, { ifVersion: version })).rejects.toBeInstanceOf(StoreError);
    await expect(store.setIf('kept', 2, { ifVersion: '' })).rejects.toBeInstanceOf(StoreError);
    await expect(store.setIf('kept', 2, { ifVersion: undefined as unknown as null })).rejects.toBeInstanceOf(StoreError);
    const signal = AbortSignal.abort();
    await expect(store.getVersioned('kept', { signal })).rejects.toBeInstanceOf(CancelledError);
    await expect(store.setIf('kept', 2, { ifVersion: version, signal })).rejects.toBeInstanceOf(CancelledError);
    expect(await store.getVersioned('kept')).toEqual({ value: 1, version });
  });
}
