/**
 * Atomic file writes, shared by everything that persists a file (the file
 * store, squad folders).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { throwIfAborted } from './abort.js';

/** Options of {@link writeFileAtomic}. */
export interface WriteFileAtomicOptions {
  /** fsync the file before the rename and the folder after it. Default: true. */
  fsync?: boolean;
  /** Create the folder first (recursively). Default: false. */
  createFolder?: boolean;
  /** Checked before the rename: an abort leaves the old file as it was. */
  signal?: AbortSignal;
}

/**
 * Write `text` to `path` atomically: a temporary file (`.tmp-<random>`) in
 * the same folder, fsync, rename over the target, fsync of the folder. A
 * reader sees the old content or the new, never a mix; on failure the
 * temporary file is removed and the target is untouched.
 */
export async function writeFileAtomic(path: string, text: string, options: WriteFileAtomicOptions = {}): Promise<void> {
  const fsync = options.fsync ?? true;
  const folder = dirname(path);
  if (options.createFolder) await mkdir(folder, { recursive: true });
  const temp = join(folder, `.tmp-${randomBytes(6).toString('hex')}`);
  try {
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(text, 'utf8');
      if (fsync) await handle.sync();
    } finally {
      await handle.close();
    }
    throwIfAborted(options.signal);
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  if (fsync) await syncFolder(folder);
}

/** fsync a folder, so a rename or unlink in it survives a crash. Ignored where the platform cannot (Windows). */
export async function syncFolder(folder: string): Promise<void> {
  let handle;
  try {
    handle = await open(folder, 'r');
    await handle.sync();
  } catch {
    // Some platforms cannot fsync a folder; the rename is still atomic.
  } finally {
    await handle?.close();
  }
}
