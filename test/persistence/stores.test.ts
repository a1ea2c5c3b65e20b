import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/clock.js';
import { CancelledError } from '../../src/core/errors.js';
import { decodeKey, encodeKey, fileStore } from '../../src/persistence/file-store.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { adversarialKeys, storeSuite } from '../../src/testing/store-suite.js';
import { runIncrementers } from '../helpers/cas-processes.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'troupe-store-'));

storeSuite('memoryStore', () => memoryStore(), { runner: { describe, it } });
storeSuite('fileStore', () => fileStore(tempDir()), { runner: { describe, it } });

describe('fileStore', () => {
  it('keeps every adversarial key inside its folder, reversibly', async () => {
    for (const key of adversarialKeys) {
      const path = encodeKey(key);
      expect(path.split(/[\\/]/)).not.toContain('..');
      expect(path.startsWith('/')).toBe(false);
      expect(path).not.toMatch(/[\0\\]/);
      expect(decodeKey(path)).toBe(key);
    }
    const dir = tempDir();
    const store = fileStore(join(dir, 'inner'));
    await store.set('../escape', 1);
    expect(readdirSync(dir)).toEqual(['inner']);
  });

  it('lays out documents as .json and streams as .jsonl, and leaves no temporary files', async () => {
    const dir = tempDir();
    const store = fileStore(dir);
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.set('runs/r1/checkpoint', { i })));
    await store.append('runs/r1/events', { type: 'run.started' });
    expect(readdirSync(join(dir, 'runs', 'r1')).sort()).toEqual(['checkpoint.json', 'events.jsonl']);
    expect(JSON.parse(readFileSync(join(dir, 'runs', 'r1', 'checkpoint.json'), 'utf8'))).toEqual({ i: 9 });
    expect(readFileSync(join(dir, 'runs', 'r1', 'events.jsonl'), 'utf8')).toBe('{"type":"run.started"}\n');
  });

  it('skips and reports a torn last line, and cuts it before the next append', async () => {
    const dir = tempDir();
    const path = join(dir, 'log.jsonl');
    writeFileSync(path, '{"i":0}\n{"i":1}\n{"i":2,"te');
    const store = fileStore(dir);
    const read = await store.read('log');
    expect(read.records).toEqual([{ i: 0 }, { i: 1 }]);
    expect(read.next).toBe(2);
    expect(read.torn?.reason).toMatch(/line 3, 10 characters\) has no line end/);
    await store.append('log', { i: 2 });
    expect(await fileStore(dir).read('log')).toEqual({ records: [{ i: 0 }, { i: 1 }, { i: 2 }], next: 3 });
  });

  it('reports a corrupt line in the middle of a stream and a corrupt document as StoreErrors', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.jsonl'), '{"i":0}\nnot json\n{"i":2}\n');
    writeFileSync(join(dir, 'doc.json'), '{"half":');
    const store = fileStore(dir);
    await expect(store.read('bad')).rejects.toMatchObject({ code: 'store_error', message: expect.stringMatching(/^Line 2 of stream "bad"/), details: { stream: 'bad', line: 2 } });
    await expect(store.get('doc')).rejects.toMatchObject({ code: 'store_error', details: { corrupt: true, raw: '{"half":' } });
  });

  it('skips a queued write whose signal aborts before it starts', async () => {
    const store = fileStore(tempDir());
    const controller = new AbortController();
    const first = store.set('q', 'first');
    const second = store.set('q', 'second', { signal: controller.signal });
    const rejected = expect(second).rejects.toMatchObject({ name: 'CancelledError', code: 'cancelled' });
    controller.abort();
    await first;
    await rejected;
    expect(await store.get('q')).toBe('first');
  });

  it('reads a stream whose file ends without a newline after a complete record as torn', async () => {
    const dir = tempDir();
    appendFileSync(join(dir, 's.jsonl'), '{"i":0}\n{"i":1}');
    const read = await fileStore(dir).read('s');
    expect(read.records).toEqual([{ i: 0 }]);
    expect(read.torn).toBeDefined();
  });
});

describe('fileStore compare-and-set across processes', () => {
  it('loses no update when several processes write one document with setIf', async () => {
    const dir = tempDir();
    const conflicts = await runIncrementers(['file', dir], 4, 15);
    const { n, by } = (await fileStore(dir).get('counter')) as { n: number; by: string[] };
    expect(n).toBe(60);
    expect(new Set(by).size).toBe(60);
    expect(conflicts).toHaveLength(4);
    // The lock folders are gone and never listed.
    expect(readdirSync(dir).sort()).toEqual(['counter.json']);
  });

  it('waits while another process holds the document lock, and gives up when its signal aborts', async () => {
    const dir = tempDir();
    const clock = new SimulatedClock();
    const store = fileStore(dir, { clock });
    await store.set('doc', 1);
    mkdirSync(join(dir, '.lock-doc.json')); // held by "another process", fresh
    const controller = new AbortController();
    const pending = store.setIf('doc', 2, { ifVersion: (await store.getVersioned('doc'))!.version, signal: controller.signal });
    const outcome = pending.then(() => 'written', (e: unknown) => e);
    // It tries, finds the lock held, and waits on the clock before each new attempt.
    for (let attempt = 0; attempt < 3; attempt++) {
      while (clock.pending === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      await clock.advance(20);
    }
    while (clock.pending === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await store.get('doc')).toBe(1);
    controller.abort();
    expect(await outcome).toBeInstanceOf(CancelledError);
    expect(clock.pending).toBe(0);
    expect(await store.get('doc')).toBe(1);
    expect(await store.list('')).toEqual(['doc']);
  });

  it('takes over a lock left by a dead process once it is stale', async () => {
    const dir = tempDir();
    const store = fileStore(dir);
    await store.set('doc', 1);
    const lock = join(dir, '.lock-doc.json');
    mkdirSync(lock);
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    const version = (await store.getVersioned('doc'))!.version;
    expect((await store.setIf('doc', 2, { ifVersion: version })).ok).toBe(true);
    expect(await store.get('doc')).toBe(2);
    expect(existsSync(lock)).toBe(false);
  });
});

describe('key encoding (property)', () => {
  it('round-trips any well-formed key and never leaves the folder', async () => {
    const fc = await import('fast-check');
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.constantFrom('..', '.', '', '\\', '\0', '.json', 'x.jsonl', '%', 'C:')), { minLength: 1, maxLength: 5 }), (parts) => {
        const key = parts.join('/');
        if (key === '' || /[\uD800-\uDFFF]/.test(key)) return;
        const path = encodeKey(key);
        expect(decodeKey(path)).toBe(key);
        // Paths of different keys differ even on case-insensitive file systems.
        expect(decodeKey(path.toLowerCase())).toBe(key);
        for (const segment of path.split(/[\\/]/)) {
          expect(segment).toMatch(/^[a-z0-9_%A-F-][a-z0-9_.%A-F-]*$/);
          expect(segment).not.toMatch(/\.jsonl?$/);
        }
      }),
      { numRuns: 500 },
    );
  });
});
