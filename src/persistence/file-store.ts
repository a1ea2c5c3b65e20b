/**
 * `fileStore(dir)`: a {@link Store} on the local file system, with atomic
 * document writes and JSONL streams.
 * @module
 */
import { mkdir, open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { combineSignals, throwIfAborted } from '../core/abort.js';
import { realClock, sleep, type Clock } from '../core/clock.js';
import { syncFolder, writeFileAtomic } from '../core/fs.js';
import { ConfigurationError, ParseError, StoreError, TroupeError, describeValue, errorMessage } from '../core/errors.js';
import { parseJsonLines } from '../core/run-log-reader.js';
import { KeyedQueue, checkIfVersion, checkKey, readFrom, toJsonText, versionOf } from '../core/store-internal.js';
import type { SetIfResult, Store, StoreCallOptions, StoreReadOptions, StoreReadResult, StoreSetIfOptions, VersionedDocument } from '../core/store.js';
import { defined } from '../core/defined.js';
import { boolean, clock as clockCheck, defineOptions } from '../core/options.js';

/** Options of {@link fileStore}. */
export interface FileStoreOptions {
  /** fsync files and folders after writes and appends. Default: true. */
  fsync?: boolean;
  /** Clock for the waits between attempts at a document lock another process holds (`setIf`). Default: the real clock. */
  clock?: Clock;
}

/** A file store; `dir` is where it keeps its files. */
export interface FileStore extends Store {
  /** The absolute folder of the store. */
  readonly dir: string;
  deleteStream(stream: string, options?: StoreCallOptions): Promise<boolean>;
  getVersioned(key: string, options?: StoreCallOptions): Promise<VersionedDocument | undefined>;
  setIf(key: string, value: unknown, options: StoreSetIfOptions): Promise<SetIfResult>;
}

const DOC = '.json';
const STREAM = '.jsonl';

const fileStoreOptions = defineOptions<FileStoreOptions>('fileStore', { fsync: boolean, clock: clockCheck });

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
 * - A torn last line of a stream (text after the last line end: a crash
 *   mid-append) is skipped on read and reported in `torn`, by the one rule
 *   of the run-log reader (docs/persistence.md); the next append first cuts
 *   it off. A line that is not JSON elsewhere is a `StoreError` naming it.
 * - `setIf` holds a lock on the document (the folder `.lock-<file>` beside
 *   it, through proper-lockfile) while it compares and writes, so `setIf`
 *   calls of several processes on one key exclude each other. A lock left by
 *   a dead process is taken over once it is 10 s stale.
 *
 * @example
 * ```ts
 * const store = fileStore('.troupe');
 * await store.set('runs/r1/checkpoint', { step: 3 });
 * ```
 */
export function fileStore(dir: string, options: FileStoreOptions = {}): FileStore {
  fileStoreOptions.check(options);
  if (typeof dir !== 'string' || dir === '') {
    throw new ConfigurationError(`Expected \`dir\` to be a non-empty string, got ${describeValue(dir)}`);
  }
  const root = resolve(dir);
  const fail = (action: string, name: string, error: unknown): never => {
    if (error instanceof TroupeError || (error instanceof Error && error.name === 'AbortError')) throw error;
    throw new StoreError(`Could not ${action} "${name}" in ${root}: ${errorMessage(error)}`, { cause: error, details: { key: name, dir: root } });
  };
  const env: FileStoreEnv = {
    root,
    fsync: options.fsync ?? true,
    clock: options.clock ?? realClock,
    queue: new KeyedQueue(),
    repaired: new Set<string>(),
    pathOf: (key, ext) => join(root, encodeKey(key) + ext),
    fail,
  };
  return { dir: root, ...documents(env), ...streams(env) };
}

/** What the methods of one file store share. */
interface FileStoreEnv {
  /** The store's absolute folder. */
  root: string;
  fsync: boolean;
  clock: Clock;
  /** Writes of one file, one at a time in call order. */
  queue: KeyedQueue;
  /** Streams whose torn tail was cut off (once per stream). */
  repaired: Set<string>;
  /** The file of a key or stream. */
  pathOf(key: string, ext: string): string;
  /** Rethrow a failure as a `StoreError` naming the action and the key. */
  fail(action: string, name: string, error: unknown): never;
}

/** The document methods of a file store. */
function documents(env: FileStoreEnv): Pick<FileStore, 'get' | 'getVersioned' | 'setIf' | 'set' | 'delete' | 'list'> {
  const { root, fsync, clock, queue, pathOf, fail } = env;
  return {
    async get(key, opts = {}) {
      throwIfAborted(opts.signal);
      checkKey(key);
      const text = await readText(pathOf(key, DOC)).catch((e: unknown) => fail('read', key, e));
      throwIfAborted(opts.signal);
      return text === undefined ? undefined : parseDocument(text, key, root);
    },
    async getVersioned(key, opts = {}) {
      throwIfAborted(opts.signal);
      checkKey(key);
      const text = await readText(pathOf(key, DOC)).catch((e: unknown) => fail('read', key, e));
      throwIfAborted(opts.signal);
      return text === undefined ? undefined : { value: parseDocument(text, key, root), version: versionOf(text) };
    },
    async setIf(key, value, opts) {
      checkKey(key);
      checkIfVersion(opts?.ifVersion);
      const text = toJsonText(value, `key "${key}"`);
      const path = pathOf(key, DOC);
      return queue.run(path, opts.signal, async (): Promise<SetIfResult> => {
        try {
          await mkdir(dirname(path), { recursive: true });
          const lock = await lockDocument(path, clock, opts.signal);
          try {
            const current = await readText(path);
            const holds = opts.ifVersion === null ? current === undefined : current !== undefined && versionOf(current) === opts.ifVersion;
            if (!holds) return { ok: false };
            await writeFileAtomic(path, text, { fsync, signal: combineSignals(opts.signal, lock.lost) });
            return { ok: true, version: versionOf(text) };
          } finally {
            await lock.release();
          }
        } catch (error) {
          return fail('write', key, error);
        }
      });
    },
    async set(key, value, opts = {}) {
      checkKey(key);
      const text = toJsonText(value, `key "${key}"`);
      const path = pathOf(key, DOC);
      return queue.run(path, opts.signal, () => writeFileAtomic(path, text, { fsync, createFolder: true, ...defined({ signal: opts.signal }) }).catch((e: unknown) => fail('write', key, e)));
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
  };
}

/** The stream methods of a file store. */
function streams(env: FileStoreEnv): Pick<FileStore, 'append' | 'read' | 'deleteStream'> {
  const { fsync, queue, repaired, pathOf, fail } = env;
  return {
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
      return parseStream(text ?? '', stream, from);
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
 * collide with files). For Windows, the first letter of a device name
 * (`con`, `prn`, `aux`, `nul`, `com0`-`com9`, `lpt0`-`lpt9`, also before an
 * extension: `nul.txt`) and a trailing `.` are encoded too (a trailing space
 * already is, as every space). An empty segment becomes `%`. Decoding is
 * plain percent-decoding, so the encoding is reversible.
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
  // Windows: device names are reserved whatever the extension, and a trailing dot is dropped.
  if (WINDOWS_RESERVED.test(out)) out = `%${out.charCodeAt(0).toString(16).toUpperCase()}${out.slice(1)}`;
  if (out.endsWith('.')) out = `${out.slice(0, -1)}%2E`;
  return out;
}

/** Parse a document's text; a {@link StoreError} (with `details.corrupt`) when it is not JSON. */
function parseDocument(text: string, key: string, root: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new StoreError(`Document "${key}" in ${root} is not valid JSON: ${errorMessage(error)}`, { cause: error, details: { key, corrupt: true, raw: text } });
  }
}

/** Wait between attempts at a document lock another process holds, in ms. */
const LOCK_POLL_MS = 20;

/**
 * Take the cross-process lock of the document at `path` (the folder
 * `.lock-<file>` beside it), waiting while another process holds it.
 * `lost` aborts if the lock is taken from us (it went stale).
 */
async function lockDocument(path: string, clock: Clock, signal: AbortSignal | undefined): Promise<{ lost: AbortSignal; release: () => Promise<void> }> {
  // Loaded on first use: a store that never calls setIf never loads it.
  const { default: lockfile } = await import('proper-lockfile');
  const lost = new AbortController();
  const lockfilePath = join(dirname(path), `.lock-${basename(path)}`);
  for (;;) {
    throwIfAborted(signal);
    try {
      const release = await lockfile.lock(path, {
        realpath: false,
        lockfilePath,
        retries: 0,
        onCompromised: (error) => lost.abort(new StoreError(`The lock on ${path} was lost: ${error.message}`, { cause: error, details: { path } })),
      });
      return { lost: lost.signal, release: () => release().catch(() => undefined) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    }
    await sleep(clock, LOCK_POLL_MS, signal);
  }
}

/** A name Windows reserves for a device (`con`, `nul`, `com1`...), alone or before an extension (`nul.txt`). */
const WINDOWS_RESERVED = /^(?:con|prn|aux|nul|com\d|lpt\d)(?:\.|$)/;

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

/** Cut a torn last line (text after the last line end) so the next record starts on its own line. */
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
      const read = chunk.subarray(0, bytesRead);
      const at = Math.max(read.lastIndexOf(10), read.lastIndexOf(13)); // a line end: \n, or the \r of \r\n or of an old Mac file
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

/** A stream's records by the run-log reader's one rule (`parseJsonLines`); a line that is not JSON is a {@link StoreError} naming it. */
function parseStream(text: string, stream: string, from: number): StoreReadResult {
  try {
    const { records, count, torn } = parseJsonLines(text, `stream "${stream}"`, from);
    return { records, next: Math.max(from, count), ...(torn ? { torn } : {}) };
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    throw new StoreError(error.message, { cause: error, details: { stream, line: error.details['line'] } });
  }
}
