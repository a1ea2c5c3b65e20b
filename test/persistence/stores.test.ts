import { mkdtempSync, readdirSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeKey, encodeKey, fileStore } from '../../src/persistence/file-store.js';
import { memoryStore } from '../../src/persistence/memory-store.js';
import { adversarialKeys, storeSuite } from '../../src/testing/store-suite.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'troupe-store-'));

storeSuite('memoryStore', () => memoryStore());
storeSuite('fileStore', () => fileStore(tempDir()));

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
    expect(read.torn?.reason).toMatch(/no newline/);
    await store.append('log', { i: 2 });
    expect(await fileStore(dir).read('log')).toEqual({ records: [{ i: 0 }, { i: 1 }, { i: 2 }], next: 3 });
  });

  it('reports a corrupt line in the middle of a stream and a corrupt document as StoreErrors', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.jsonl'), '{"i":0}\nnot json\n{"i":2}\n');
    writeFileSync(join(dir, 'doc.json'), '{"half":');
    const store = fileStore(dir);
    await expect(store.read('bad')).rejects.toMatchObject({ code: 'store_error', message: expect.stringMatching(/line 2/) });
    await expect(store.get('doc')).rejects.toMatchObject({ code: 'store_error', details: { corrupt: true, raw: '{"half":' } });
  });

  it('skips a queued write whose signal aborts before it starts', async () => {
    const store = fileStore(tempDir());
    const controller = new AbortController();
    const first = store.set('q', 'first');
    const second = store.set('q', 'second', { signal: controller.signal });
    const rejected = expect(second).rejects.toBeTruthy();
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
