/**
 * `storeSuite`: the conformance suite every store must pass.
 * @module
 */
import { describe, expect, it } from 'vitest';
import { StoreError } from '../core/errors.js';
import type { Store } from '../persistence/store.js';

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

/**
 * Register the conformance tests for a store with vitest. `factory` returns
 * a new, empty store for each test; the tests cover documents, key encoding,
 * ordering of concurrent writes, streams and cancellation.
 *
 * @example
 * ```ts
 * storeSuite('redis', async () => redisStore({ url, prefix: `test-${randomUUID()}` }));
 * ```
 */
export function storeSuite(name: string, factory: () => Store | Promise<Store>): void {
  describe(`store conformance: ${name}`, () => {
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

    it('honours an aborted signal on every call, and does nothing', async () => {
      const store = await factory();
      await store.set('kept', 1);
      await store.append('kept-stream', 1);
      const signal = AbortSignal.abort();
      await expect(store.get('kept', { signal })).rejects.toBeTruthy();
      await expect(store.set('kept', 2, { signal })).rejects.toBeTruthy();
      await expect(store.delete('kept', { signal })).rejects.toBeTruthy();
      await expect(store.list('', { signal })).rejects.toBeTruthy();
      await expect(store.append('kept-stream', 2, { signal })).rejects.toBeTruthy();
      await expect(store.read('kept-stream', { signal })).rejects.toBeTruthy();
      if (store.deleteStream) await expect(store.deleteStream('kept-stream', { signal })).rejects.toBeTruthy();
      expect(await store.get('kept')).toBe(1);
      expect((await store.read('kept-stream')).records).toEqual([1]);
    });

    it('stays consistent when a write is aborted mid-way', async () => {
      const store = await factory();
      const controller = new AbortController();
      const first = store.set('q', 'first');
      const second = store.set('q', 'second', { signal: controller.signal });
      const settled = second.catch(() => undefined);
      controller.abort();
      await first;
      await settled;
      expect(['first', 'second']).toContain(await store.get('q'));
      await store.set('q', 'third');
      expect(await store.get('q')).toBe('third');
    });
  });
}
