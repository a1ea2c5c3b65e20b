import { Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { CancelledError, ConfigurationError, StoreError } from '../../../src/core/errors.js';
import { decodeRedisKey, encodeRedisKey, redisStore } from '../../../src/integrations/redis/index.js';
import { adversarialKeys, storeSuite } from '../../../src/testing/store-suite.js';
import { runIncrementers } from '../../helpers/cas-processes.js';
import { closedAfterEach, freePort, redisTarget, startRedisCluster, startRedisServer, testPrefixes, type RedisClusterServers, type RedisServer } from '../../helpers/redis.js';

const { url, binary } = redisTarget();
const prefix = testPrefixes(url);
const closeLater = closedAfterEach();

describe('redisStore options', () => {
  it('refuses bad options with a ConfigurationError, before connecting', () => {
    const bad: unknown[] = [undefined, {}, { connection: '' }, { connection: 42 }];
    for (const options of bad) expect(() => redisStore(options as never)).toThrow(ConfigurationError);
    expect(() => redisStore({ connection: 'redis://127.0.0.1:1', prefix: '' })).toThrow(/prefix/);
    expect(() => redisStore({ connection: 'redis://127.0.0.1:1', prefix: '{troupe:' })).toThrow(/hash tag/);
    expect(() => redisStore({ connection: 'redis://127.0.0.1:1', prefix: '{}:' })).toThrow(/hash tag/);
    expect(() => redisStore({ connection: 'redis://127.0.0.1:1', timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(redisStore({ connection: 'redis://127.0.0.1:1', prefix: '{troupe}:' }).prefix).toBe('{troupe}:');
  });

  it('encodes keys without `:` and decodes them back', () => {
    for (const key of [...adversarialKeys, 'a:b', '%3A', '%25:%', ':::']) {
      const encoded = encodeRedisKey(key);
      expect(encoded).not.toContain(':');
      expect(decodeRedisKey(encoded)).toBe(key);
    }
    expect(encodeRedisKey('runs:a%b')).toBe('runs%3Aa%25b');
  });

  it('fails a call with a StoreError after timeoutMs on its clock when Redis cannot be reached', async () => {
    const clock = new SimulatedClock();
    const port = await freePort(); // nothing listens there
    const store = closeLater(redisStore({ connection: `redis://127.0.0.1:${port}`, timeoutMs: 2000, clock }));
    const pending = store.get('k');
    const outcome = pending.catch((e: unknown) => e);
    await clock.advance(1999);
    await clock.advance(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ code: 'store_error', details: { timeoutMs: 2000, key: 'k' } });
    expect((error as Error).message).toMatch(/did not answer within 2000 ms/);
  });
});

describe.skipIf(!url)('redisStore on Redis', () => {
  storeSuite('redisStore (its own connection)', () => closeLater(redisStore({ connection: url!, prefix: prefix() })), { runner: { describe, it } });
  storeSuite(
    'redisStore (a client you give)',
    () => {
      const client = closeLater(new Redis(url!));
      return redisStore({ connection: client, prefix: prefix({ hashTag: true }) });
    },
    { runner: { describe, it } },
  );

  it('lays out documents and streams under the prefix, encoded', async () => {
    const p = prefix();
    const store = closeLater(redisStore({ connection: url!, prefix: p }));
    const raw = closeLater(new Redis(url!));
    await store.set('runs:1/a%b', { v: 1 });
    await store.append('runs:1/events', { e: 1 });
    expect(await raw.get(`${p}d:runs%3A1/a%25b`)).toBe('{"v":1}');
    expect(await raw.lrange(`${p}s:runs%3A1/events`, 0, -1)).toEqual(['{"e":1}']);
    expect((await raw.keys(`${p}*`)).sort()).toEqual([`${p}d:runs%3A1/a%25b`, `${p}s:runs%3A1/events`]);
  });

  it('keeps stores with nested prefixes apart', async () => {
    const base = prefix();
    const outer = closeLater(redisStore({ connection: url!, prefix: base }));
    // Prefixes chosen to fall under the outer store's document namespace.
    const inner = closeLater(redisStore({ connection: url!, prefix: `${base}d:` }));
    const deeper = closeLater(redisStore({ connection: url!, prefix: `${base}d:x` }));
    await outer.set('d', 'outer');
    await inner.set('y', 'inner');
    await deeper.set('z', 'deeper');
    await inner.append('s', 'inner');
    expect(await outer.list('')).toEqual(['d']);
    expect(await inner.list('')).toEqual(['y']);
    expect(await deeper.list('')).toEqual(['z']);
    expect(await outer.get('d:y')).toBeUndefined();
    expect(await outer.get('xd:z')).toBeUndefined();
    expect(await inner.get('d')).toBeUndefined();
    expect((await outer.read('s')).records).toEqual([]);
    expect(await outer.get('d')).toBe('outer');
  });

  it('reports a document or record that is not JSON as a StoreError', async () => {
    const p = prefix();
    const store = closeLater(redisStore({ connection: url!, prefix: p }));
    const raw = closeLater(new Redis(url!));
    await raw.set(`${p}d:bad`, '{not json');
    await raw.rpush(`${p}s:log`, '{"i":0}', 'torn{');
    await expect(store.get('bad')).rejects.toMatchObject({ code: 'store_error', details: { key: 'bad', corrupt: true, raw: '{not json' } });
    await expect(store.getVersioned('bad')).rejects.toBeInstanceOf(StoreError);
    await expect(store.read('log')).rejects.toMatchObject({ code: 'store_error', details: { stream: 'log', index: 1 } });
    expect(await store.read('log', { from: 2 })).toEqual({ records: [], next: 2 });
  });

  it('gives versions that are the SHA-1 Redis computes, so a version read by one client holds for another', async () => {
    const p = prefix();
    const a = closeLater(redisStore({ connection: url!, prefix: p }));
    const b = closeLater(redisStore({ connection: url!, prefix: p }));
    const created = await a.setIf('doc', { é: '日本' }, { ifVersion: null });
    expect(created.ok).toBe(true);
    const read = await b.getVersioned('doc');
    expect(read).toEqual({ value: { é: '日本' }, version: created.ok ? created.version : '' });
    expect((await b.setIf('doc', 2, { ifVersion: read!.version })).ok).toBe(true);
    expect(await a.setIf('doc', 3, { ifVersion: read!.version })).toEqual({ ok: false });
    expect(await a.get('doc')).toBe(2);
  });

  it('loses no update under concurrent writers on several connections', async () => {
    const p = prefix();
    const stores = Array.from({ length: 5 }, () => closeLater(redisStore({ connection: url!, prefix: p })));
    let conflicts = 0;
    await Promise.all(
      stores.map(async (store, s) => {
        for (let i = 0; i < 10; i++) {
          for (;;) {
            const current = await store.getVersioned('counter');
            const doc = (current?.value as { by: string[] } | undefined) ?? { by: [] };
            const written = await store.setIf('counter', { by: [...doc.by, `${s}-${i}`] }, { ifVersion: current?.version ?? null });
            if (written.ok) break;
            conflicts++;
          }
        }
      }),
    );
    const { by } = (await stores[0]!.get('counter')) as { by: string[] };
    expect(by).toHaveLength(50);
    expect(new Set(by).size).toBe(50);
    expect(conflicts).toBeGreaterThan(0); // the writers did race
  });

  it('loses no update under concurrent writers in several processes', async () => {
    const p = prefix();
    const conflicts = await runIncrementers(['redis', url!, p], 4, 15);
    const store = closeLater(redisStore({ connection: url!, prefix: p }));
    const { n, by } = (await store.get('counter')) as { n: number; by: string[] };
    expect(n).toBe(60);
    expect(new Set(by).size).toBe(60);
    expect(conflicts.every((c) => Number.isInteger(c))).toBe(true);
  });

  it('aborts a call whose signal aborts, and closes when its own signal aborts', async () => {
    const controller = new AbortController();
    const store = closeLater(redisStore({ connection: url!, prefix: prefix(), signal: controller.signal }));
    await store.set('k', 1);
    controller.abort();
    await expect(store.get('k')).rejects.toMatchObject({ code: 'store_error', details: { closed: true } });
    await expect(store.set('k', 2)).rejects.toBeInstanceOf(StoreError);
  });

  it('resolves close() once the connection it opened has closed: Redis no longer lists it', async () => {
    const name = `troupe-close-${Math.random().toString(36).slice(2, 10)}`;
    const target = new URL(url!);
    const store = redisStore({ connection: { host: target.hostname, port: Number(target.port || 6379), connectionName: name }, prefix: prefix() });
    await store.set('k', 1);
    const admin = closeLater(new Redis(url!));
    expect(String(await admin.client('LIST'))).toContain(`name=${name}`);
    await store.close();
    expect(String(await admin.client('LIST'))).not.toContain(`name=${name}`);
  });

  it('leaves a client you give open on close', async () => {
    const client = closeLater(new Redis(url!));
    const store = redisStore({ connection: client, prefix: prefix() });
    await store.set('k', 1);
    await store.close();
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
    await expect(store.get('k')).rejects.toMatchObject({ details: { closed: true } });
  });
});

describe.skipIf(!binary)('redisStore when Redis goes away', () => {
  const servers: RedisServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop();
  });
  const start = async (port?: number) => {
    const server = await startRedisServer({ binary: binary!, ...(port === undefined ? {} : { port }) });
    servers.push(server);
    return server;
  };

  it('fails a call in flight with a StoreError when Redis dies, fails fast while it is down, and works again once it is back', async () => {
    const { url: own, port, process: redis } = await start();
    const store = closeLater(redisStore({ connection: own, prefix: 'gone:', timeoutMs: 1000 }));
    await store.set('k', 1);
    redis.kill('SIGSTOP'); // the next command is sent but never answered...
    const inFlight = store.get('k').catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    redis.kill('SIGKILL'); // ...and then the server dies under it
    const error = await inFlight;
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ code: 'store_error' });
    // While Redis is down: a StoreError once the time-out has passed, never a hang.
    const down = await store.set('k', 2).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(StoreError);
    expect((down as Error).message).toMatch(/did not answer within 1000 ms.*(ECONNREFUSED|closed)/);
    // Redis is back (empty: it keeps nothing): the same store carries on.
    await servers.pop()!.stop();
    await start(port);
    await store.set('k', 3);
    expect(await store.get('k')).toBe(3);
  });

  it('fails a call to a frozen Redis with a StoreError after timeoutMs, also on a client you give', async () => {
    const { url: own, process: redis } = await start();
    const store = closeLater(redisStore({ connection: own, prefix: 'frozen:', timeoutMs: 500 }));
    const client = closeLater(new Redis(own)); // ioredis defaults: an offline queue, 20 retries
    const given = redisStore({ connection: client, prefix: 'frozen:', timeoutMs: 500 });
    await store.set('k', 1);
    await given.set('k', 1);
    redis.kill('SIGSTOP');
    try {
      for (const s of [store, given]) {
        const error = await s.get('k').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StoreError);
        expect(error).toMatchObject({ details: { timeoutMs: 500 } });
      }
    } finally {
      redis.kill('SIGCONT');
    }
    expect(await store.get('k')).toBe(1);
  });

  it('rejects with the abort error when the signal aborts while Redis does not answer, and ends calls when the store closes', async () => {
    const { url: own, process: redis } = await start();
    const store = closeLater(redisStore({ connection: own, prefix: 'abort:', timeoutMs: 60_000 }));
    await store.set('k', 1);
    redis.kill('SIGSTOP');
    try {
      const controller = new AbortController();
      const pending = store.append('s', 1, { signal: controller.signal }).catch((e: unknown) => e);
      const listing = store.list('', { signal: controller.signal }).catch((e: unknown) => e);
      controller.abort();
      expect(await pending).toBeInstanceOf(CancelledError);
      expect(await listing).toBeInstanceOf(CancelledError);
      // The store's own signal ends a call in flight too, and closes the store.
      const closing = new AbortController();
      const owned = closeLater(redisStore({ connection: own, prefix: 'abort:', timeoutMs: 60_000, signal: closing.signal }));
      const inFlight = owned.get('k').catch((e: unknown) => e);
      closing.abort();
      expect(await inFlight).toMatchObject({ code: 'store_error', details: { closed: true } });
    } finally {
      redis.kill('SIGCONT');
    }
  });
});

describe.skipIf(!binary)('redisStore on a Redis Cluster', () => {
  let cluster: RedisClusterServers | undefined;
  let client: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster({ binary: binary!, masters: 3 });
    client = new Cluster(cluster.nodes);
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  storeSuite('redisStore (Redis Cluster, hash-tagged prefix)', () => redisStore({ connection: client!, prefix: prefix({ hashTag: true }) }), { runner: { describe, it } });

  it('lists keys spread over every master when the prefix has no hash tag', async () => {
    const store = redisStore({ connection: client!, prefix: prefix() });
    const keys = Array.from({ length: 40 }, (_, i) => `k${String(i).padStart(2, '0')}`);
    for (const key of keys) await store.set(key, key);
    const perNode = await Promise.all(client!.nodes('master').map((node) => node.keys(`${store.prefix}*`)));
    expect(perNode.filter((k) => k.length > 0).length).toBeGreaterThan(1);
    expect(await store.list('')).toEqual(keys);
    expect(await store.list('k1')).toEqual(keys.slice(10, 20));
  });

  it('keeps every key of a hash-tagged prefix on one node', async () => {
    const p = prefix({ hashTag: true });
    const store = redisStore({ connection: client!, prefix: p });
    for (let i = 0; i < 20; i++) await store.set(`runs/r${i}/checkpoint`, i);
    await store.append('runs/r0/events', { e: 1 });
    const perNode = await Promise.all(client!.nodes('master').map((node) => node.keys(`${p}*`)));
    expect(perNode.map((k) => k.length).sort((a, b) => a - b)).toEqual([0, 0, 21]);
    expect(await store.list('runs/')).toHaveLength(20);
  });
});
