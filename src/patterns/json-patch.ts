/**
 * JSON Patch (RFC 6902), the operations a working memory takes: `add`,
 * `remove` and `replace`, at JSON pointers (RFC 6901: `/a/0/b`, `~1` for
 * `/` and `~0` for `~`, `-` for the end of a list). Applied to a copy;
 * linear in the value and the patch.
 * @module
 */
import { z } from 'zod';

/** One operation of a JSON Patch. */
export interface JsonPatchOperation {
  /** `add` (into an object, or into a list at an index or `-` for its end), `remove`, or `replace` (of what is there). */
  op: 'add' | 'remove' | 'replace';
  /** A JSON pointer: `''` is the whole value, `/notes/-` the end of the list `notes`. */
  path: string;
  /** The value (`add`, `replace`). */
  value?: unknown;
}

/** The zod schema of a JSON Patch (a list of operations). */
export const jsonPatchSchema = z.array(
  z.object({
    op: z.enum(['add', 'remove', 'replace']),
    path: z.string(),
    value: z.unknown().optional(),
  }),
);

/** The tokens of a JSON pointer; throws for text that is not one. */
function tokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`"${pointer}" is not a JSON pointer (it starts with "/")`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return typeof value === 'object' && value !== null;
}

/** The index `token` names in a list of `length` (`-`: the end, only when adding). */
function indexOf(token: string, length: number, adding: boolean, path: string): number {
  if (token === '-' && adding) return length;
  if (!/^(0|[1-9][0-9]{0,8})$/.test(token)) throw new Error(`"${token}" in "${path}" is not a list index`);
  const index = Number(token);
  if (index > length || (!adding && index === length)) throw new Error(`Index ${index} in "${path}" is past the end of the list`);
  return index;
}

/**
 * Apply `patch` to a copy of `value` and return it. Throws an `Error`
 * naming the operation for a path that does not lead anywhere.
 */
export function applyJsonPatch(value: unknown, patch: readonly JsonPatchOperation[]): unknown {
  let doc: unknown = structuredClone(value);
  for (const operation of patch) {
    const path = tokens(operation.path);
    if (operation.op !== 'remove' && !('value' in operation)) throw new Error(`The ${operation.op} at "${operation.path}" has no value`);
    if (path.length === 0) {
      if (operation.op === 'remove') throw new Error('The whole value cannot be removed');
      doc = structuredClone(operation.value);
      continue;
    }
    let parent: unknown = doc;
    for (const token of path.slice(0, -1)) {
      if (!isContainer(parent)) throw new Error(`"${operation.path}" goes through something that is not an object or a list`);
      parent = Array.isArray(parent) ? parent[indexOf(token, parent.length, false, operation.path)] : parent[token];
    }
    const last = path[path.length - 1]!;
    if (!isContainer(parent)) throw new Error(`"${operation.path}" goes through something that is not an object or a list`);
    if (Array.isArray(parent)) {
      const index = indexOf(last, parent.length, operation.op === 'add', operation.path);
      if (operation.op === 'add') parent.splice(index, 0, structuredClone(operation.value));
      else if (operation.op === 'replace') parent[index] = structuredClone(operation.value);
      else parent.splice(index, 1);
    } else {
      if (operation.op !== 'add' && !Object.hasOwn(parent, last)) throw new Error(`Nothing at "${operation.path}" to ${operation.op}`);
      if (operation.op === 'remove') delete parent[last];
      else parent[last] = structuredClone(operation.value);
    }
  }
  return doc;
}
