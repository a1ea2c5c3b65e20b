/**
 * `fileStore(dir)`: a {@link Store} on the local file system, with atomic
 * document writes and JSONL streams.
 * @module
 */
import { mkdir, open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { throwIfAborted } from '../core/abort.js';
import { syncFolder, writeFileAtomic } from '../core/fs.js';
import { ConfigurationError, StoreError, TroupeError, describeValue, errorMessage } from '../core/errors.js';
import { KeyedQueue, checkKey, readFrom, toJsonText } from './internal.js';
import type { Store, StoreCallOptions, StoreReadOptions, StoreReadResult } from './store.js';

/** Options of {@link fileStore}. */
export interface FileStoreOptions {
  /** fsync files and folders after writes and appends. Default: true. */
  fsync?: boolean;
}

/** A file store; `dir` is where it keeps its files. */
export interface FileStore extends Store {
  /** The absolute folder of the store. */
  readonly dir: string;
  deleteStream(stream: string, options?: StoreCallOptions): Promise<boolean>;
}

const DOC = '.json';
const STREAM = '.jsonl';

/**
 * Create a store in the folder `dir` (created on first write).
 *
 * - A document `a/b` is the file `a/b.json`; a stream `runs/x/events` is
 *   `runs/x/events.jsonl`, one JSON record per line.
 * - `set` writes a temporary file in the same folder, fsyncs it, renames it
 *   over the document and fsyncs the folder, so a crash leaves the old
 *   document or the new one. Writes (and deletes) of one key run one at a
 *   time in call order; so do appends to one stream.
 * - Keys are encoded segment by segment (see {@link encodeKey}), so no key
 *   can name a file outside `dir`, and `list` returns the original keys.
 * - A torn last line of a stream (a crash mid-append) is skipped on read and
 *   reported in `torn`; the next append first cuts it off.
 *
 * @example
 * ```ts
 * const store = fileStore('.troupe');
 * await store.set('runs/r1/checkpoint', { step: 3 });
 * ```
 */
export function fileStore(dir: string, options: FileStoreOptions = {}): FileStore {
  if (typeof dir !== 'string' || dir === '') {
    throw new ConfigurationError(`Expected \`dir\` to be a non-empty string, got ${describeValue(dir)}`);
  }
  const root = resolve(dir);
  const fsync = options.fsync ?? true;
  const queue = new KeyedQueue();
  const repaired = new Set<string>();
  const pathOf = (key: string, ext: string) => join(root, encodeKey(key) + ext);

  const fail = (action: string, name: string, error: unknown): never => {
    if (error instanceof TroupeError || (error instanceof Error && error.name === 'AbortError')) throw error;
    throw new StoreError(`Could not ${action} "${name}" in ${root}: ${errorMessage(error)}`, { cause: error, details: { key: name, dir: root } });
  };

  return {
    dir: root,
    async get(key, opts = {}) {
      throwIfAborted(opts.signal);
      checkKey(key);
      const text = await readText(pathOf(key, DOC)).catch((e: unknown) => fail('read', key, e));
      throwIfAborted(opts.signal);
      if (text === undefined) return undefined;
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        throw new StoreError(`Document "${key}" in ${root} is not valid JSON: ${errorMessage(error)}`, {
          cause: error,
          details: { key, corrupt: true, raw: text },
        });
      }
    },
    async set(key, value, opts = {}) {
      checkKey(key);
      const text = toJsonText(value, `key "${key}"`);
      const path = pathOf(key, DOC);
      return queue.run(path, opts.signal, () => writeFileAtomic(path, text, { fsync, createFolder: true, ...(opts.signal === undefined ? {} : { signal: opts.signal }) }).catch((e: unknown) => fail('write', key, e)));
    },
    async delete(key, opts = {}) {
      checkKey(key);
      const path = pathOf(key, DOC);
      return queue.run(path, opts.signal, () => removeFile(path, fsync).catch((e: unknown) => fail('delete', key, e)));
    },
    async list(prefix, opts = {}) {
      throwIfAborted(opts.signal);
      checkKey(prefix, 'prefix');
      // Start at the deepest folder every match must live in.
      const whole = prefix.split('/').slice(0, -1);
      const base = whole.length ? join(root, encodeKey(whole.join('/'))) : root;
      const found: string[] = [];
      await walk(base, whole.length ? whole.join('/') : undefined, found, opts.signal).catch((e: unknown) => fail('list', prefix, e));
      return found.filter((k) => k.startsWith(prefix)).sort();
    },
    async append(stream, record, opts = {}) {
      checkKey(stream, 'stream');
      const line = `${toJsonText(record, `stream "${stream}"`)}\n`;
      const path = pathOf(stream, STREAM);
      return queue.run(path, opts.signal, async () => {
        try {
          if (!repaired.has(path)) {
            await cutTornTail(path);
            repaired.add(path);
          }
          throwIfAborted(opts.signal);
          await mkdir(dirname(path), { recursive: true });
          const handle = await open(path, 'a');
          try {
            await handle.write(line);
            if (fsync) await handle.sync();
          } finally {
            await handle.close();
          }
        } catch (error) {
          fail('append to', stream, error);
        }
      });
    },
    async read(stream, opts: StoreReadOptions = {}): Promise<StoreReadResult> {
      throwIfAborted(opts.signal);
      checkKey(stream, 'stream');
      const from = readFrom(opts.from);
      const text = await readText(pathOf(stream, STREAM)).catch((e: unknown) => fail('read', stream, e));
      throwIfAborted(opts.signal);
      return parseJsonl(text ?? '', stream, from);
    },
    async deleteStream(stream, opts = {}) {
      checkKey(stream, 'stream');
      const path = pathOf(stream, STREAM);
      return queue.run(path, opts.signal, async () => {
        repaired.delete(path);
        return removeFile(path, fsync).catch((e: unknown) => fail('delete', stream, e));
      });
    },
  };
}

/**
 * Encode a key as a relative file path that stays inside the store.
 *
 * Each `/`-separated segment is encoded on its own: ASCII lower-case
 * letters, digits, `_`, `-` and `.` stay as they are; every other character
 * (upper-case letters too, for case-insensitive file systems) becomes `%XX`
 * per UTF-8 byte. A leading `.` is always encoded (so `..`, `.` and hidden
 * names cannot occur, and temporary files never collide), as is the last
 * `.` of a segment that would end in `.json` or `.jsonl` (so folders never
 * collide with files). An empty segment becomes `%`. Decoding is plain
 * percent-decoding, so the encoding is reversible.
 */
export function encodeKey(key: string): string {
  return key.split('/').map(encodeSegment).join(sep);
}

/** The key a relative path made by {@link encodeKey} stands for. */
export function decodeKey(path: string): string {
  return path
    .split(/[\\/]/)
    .map((s) => (s === '%' ? '' : decodeURIComponent(s)))
    .join('/');
}

function encodeSegment(segment: string): string {
  if (segment === '') return '%';
  let out = '';
  for (const ch of segment) {
    out += /^[a-z0-9_.-]$/.test(ch) ? ch : [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  if (out.startsWith('.')) out = `%2E${out.slice(1)}`;
  const m = /\.(jsonl?)$/.exec(out);
  if (m) out = `${out.slice(0, m.index)}%2E${m[1]}`;
  return out;
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function removeFile(path: string, fsync: boolean): Promise<boolean> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return false;
    throw error;
  }
  if (fsync) await syncFolder(dirname(path));
  return true;
}

/** Cut a torn last line (no trailing newline) so the next record starts on its own line. */
async function cutTornTail(path: string): Promise<void> {
  const size = await stat(path).then((s) => s.size, () => 0);
  if (size === 0) return;
  const handle = await open(path, 'r+');
  try {
    const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
    let end = size;
    // Walk back to the last newline.
    for (;;) {
      const start = Math.max(0, end - chunk.length);
      const { bytesRead } = await handle.read(chunk, 0, end - start, start);
      const at = chunk.subarray(0, bytesRead).lastIndexOf(10);
      if (end === size && at === bytesRead - 1) return; // ends with a newline: nothing torn
      if (at >= 0) {
        await handle.truncate(start + at + 1);
        return;
      }
      if (start === 0) {
        await handle.truncate(0);
        return;
      }
      end = start;
    }
  } finally {
    await handle.close();
  }
}

async function walk(folder: string, prefix: string | undefined, out: string[], signal: AbortSignal | undefined): Promise<void> {
  throwIfAborted(signal);
  let entries;
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT' || (error as { code?: string }).code === 'ENOTDIR') return;
    throw error;
  }
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue; // temporary files
    const key = (name: string) => (prefix === undefined ? '' : `${prefix}/`) + decodeKey(name);
    if (entry.isDirectory()) await walk(join(folder, entry.name), key(entry.name), out, signal);
    else if (entry.isFile() && entry.name.endsWith(DOC)) out.push(key(entry.name.slice(0, -DOC.length)));
  }
}

/** Parse JSONL text: a torn last line is skipped and reported; a bad line elsewhere is a {@link StoreError}. */
function parseJsonl(text: string, stream: string, from: number): StoreReadResult {
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  const records: unknown[] = [];
  let count = 0;
  lines.forEach((line, i) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new StoreError(`Stream "${stream}" line ${i + 1} is not valid JSON: ${errorMessage(error)}`, { cause: error, details: { stream, line: i + 1 } });
    }
    if (count++ >= from) records.push(value);
  });
  const result: StoreReadResult = { records, next: Math.max(from, count) };
  if (last !== '') result.torn = { reason: `the last line of stream "${stream}" (${last.length} characters) has no newline: a write was cut short` };
  return result;
}
