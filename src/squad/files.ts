/**
 * File access for squad folders: bounded reads that refuse symbolic links
 * leaving the folder, and the guards of writes (which go through
 * `writeFileAtomic` in `src/core/fs.ts`).
 * @module
 */
import { lstat, open, realpath, stat } from 'node:fs/promises';
import { relative, isAbsolute } from 'node:path';
import { TroupeError, WorkspaceError, errorMessage } from '../core/errors.js';

/** The most any squad file read takes: 1 MB. */
export const MAX_FILE_BYTES = 1024 * 1024;

/** What {@link readSquadFile} found. */
export type SquadFileRead =
  | { status: 'ok'; text: string; truncated: boolean }
  | { status: 'missing' }
  | { status: 'refused'; reason: string };

/** Options of {@link readSquadFile}. */
export interface ReadSquadFileOptions {
  /** Read the end of a long file instead of its start (logs that grow at the end). */
  tail?: boolean;
  /** The byte limit. Default: {@link MAX_FILE_BYTES}. */
  maxBytes?: number;
}

/** True when `path` is `base` or inside it. */
export function isInside(base: string, path: string): boolean {
  const rel = relative(base, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Read a text file inside `base` (a real path), at most `maxBytes` of it.
 * A file whose real path leaves `base`, or that is not a regular file, is
 * refused and never opened. Line endings become `\n`; a leading BOM is dropped.
 */
export async function readSquadFile(base: string, path: string, options: ReadSquadFileOptions = {}): Promise<SquadFileRead> {
  const maxBytes = options.maxBytes ?? MAX_FILE_BYTES;
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    return { status: 'missing' };
  }
  if (!isInside(base, real)) return { status: 'refused', reason: 'it is a symbolic link that leaves the squad folder' };
  try {
    const info = await stat(real);
    if (!info.isFile()) return { status: 'refused', reason: 'it is not a regular file' };
    return await readPrefixOrTail(real, maxBytes, options.tail === true);
  } catch (error) {
    return { status: 'refused', reason: `it could not be read (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
}

async function readPrefixOrTail(real: string, maxBytes: number, tail: boolean): Promise<SquadFileRead> {
  const handle = await open(real, 'r');
  try {
    const size = (await handle.stat()).size;
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    const position = tail && size > maxBytes ? size - maxBytes : 0;
    let read = 0;
    while (read < length) {
      const { bytesRead } = await handle.read(buffer, read, length - read, position + read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    let text = buffer.subarray(0, read).toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    text = text.replace(/\r\n?/g, '\n');
    return { status: 'ok', text, truncated: size > maxBytes };
  } finally {
    await handle.close();
  }
}

/**
 * Run a write to a squad folder; a file-system failure (permissions, a file
 * where a folder should be) becomes a `WorkspaceError` naming the folder.
 */
export async function guardWrite<T>(dir: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (error instanceof TroupeError || typeof code !== 'string' || !code.startsWith('E')) throw error;
    throw new WorkspaceError(`Could not write the squad folder ${dir}: ${errorMessage(error)}`, { cause: error, details: { dir, code } });
  }
}

/** True when `path` exists and is a symbolic link. */
export async function isSymlink(path: string): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  return info?.isSymbolicLink() ?? false;
}

