import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeKey, encodeKey, fileStore } from '../../src/persistence/file-store.js';

/** The names Windows reserves, whatever the extension, and how it trims names. */
const reserved = ['con', 'prn', 'aux', 'nul', ...Array.from({ length: 10 }, (_, i) => `com${i}`), ...Array.from({ length: 10 }, (_, i) => `lpt${i}`)];
const RESERVED_NAME = /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i;

/** True when Windows could open the file or folder `name` as written (not a device, not trimmed). */
function windowsSafe(name: string): boolean {
  return !RESERVED_NAME.test(name) && !/[. ]$/.test(name) && !/[<>:"/\\|?*\u0000-\u001f]/.test(name);
}

describe('fileStore names on Windows', () => {
  const keys = [
    ...reserved,
    ...reserved.map((name) => `${name}.txt`),
    ...reserved.map((name) => `runs/${name}/events`),
    'CON', 'Nul.json', 'com1.tar.gz',
    'trailing.', 'trailing..', 'dots.../x', 'space ', 'folder./doc', 'a. ./b',
    'console', 'nully', 'com10', 'lpt', 'auxiliary',
  ];

  it('encodes every reserved name, trailing dot and trailing space so that no segment is one, reversibly', () => {
    for (const key of keys) {
      const path = encodeKey(key);
      for (const segment of path.split(/[\\/]/)) {
        expect(windowsSafe(segment), `${JSON.stringify(key)} -> ${segment}`).toBe(true);
        expect(windowsSafe(`${segment}.json`), `${JSON.stringify(key)} -> ${segment}.json`).toBe(true);
      }
      expect(decodeKey(path)).toBe(key);
    }
  });

  it('leaves names that only look alike as they are', () => {
    for (const key of ['console', 'nully', 'com10', 'lpt', 'auxiliary', 'con-job', 'a.b']) expect(encodeKey(key)).toBe(key);
  });

  it('stores and lists such keys apart, as given', async () => {
    const store = fileStore(mkdtempSync(join(tmpdir(), 'troupe-store-win-')));
    for (const [i, key] of keys.entries()) await store.set(key, i);
    for (const [i, key] of keys.entries()) expect(await store.get(key)).toBe(i);
    expect(await store.list('')).toEqual([...keys].sort());
    await store.append('nul', { ok: true });
    expect((await store.read('nul')).records).toEqual([{ ok: true }]);
    expect(readdirSync(store.dir).every((name) => windowsSafe(name))).toBe(true);
  });
});
