/**
 * JSON Pointers (RFC 6901) for edits of a checkpoint: `/entry/output`,
 * `/state/transcript/2/text`. One pass over the pointer; no regular
 * expressions.
 * @module
 */
import { ConfigurationError, describeValue } from '../core/errors.js';

/** The reference tokens of `pointer` (`''` is the whole document). */
export function parsePointer(pointer: string): string[] {
  if (typeof pointer !== 'string') throw new ConfigurationError(`Expected a JSON pointer, got ${describeValue(pointer)}`, { code: 'invalid_edit' });
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw new ConfigurationError(`Expected a JSON pointer starting with "/" (for example /entry/output), got "${pointer}"`, { code: 'invalid_edit', details: { pointer } });
  }
  const tokens: string[] = [];
  let token = '';
  for (let i = 1; i < pointer.length; i++) {
    const ch = pointer[i]!;
    if (ch === '/') {
      tokens.push(token);
      token = '';
    } else if (ch === '~') {
      const next = pointer[++i];
      if (next !== '0' && next !== '1') throw new ConfigurationError(`JSON pointer "${pointer}" has "~" not followed by 0 or 1 at character ${i}`, { code: 'invalid_edit', details: { pointer } });
      token += next === '0' ? '~' : '/';
    } else token += ch;
  }
  tokens.push(token);
  return tokens;
}

/**
 * Set the value at `pointer` in `doc` (changed in place; `doc` itself is
 * returned, or `value` for the empty pointer). The parent must exist; in an
 * array the last token is an index up to its length, or `-` to append.
 */
export function setPointer(doc: unknown, pointer: string, value: unknown): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  let parent: unknown = doc;
  for (let i = 0; i < tokens.length - 1; i++) {
    parent = child(parent, tokens[i]!, pointer);
    if (parent === undefined) throw new ConfigurationError(`JSON pointer "${pointer}": nothing at "/${tokens.slice(0, i + 1).join('/')}"`, { code: 'invalid_edit', details: { pointer } });
  }
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : arrayIndex(last, pointer);
    if (index > parent.length) throw new ConfigurationError(`JSON pointer "${pointer}": index ${index} is past the end of an array of ${parent.length}`, { code: 'invalid_edit', details: { pointer } });
    parent[index] = value;
  } else if (parent !== null && typeof parent === 'object') {
    (parent as Record<string, unknown>)[last] = value;
  } else {
    throw new ConfigurationError(`JSON pointer "${pointer}": its parent is not an object or an array`, { code: 'invalid_edit', details: { pointer } });
  }
  return doc;
}

function child(value: unknown, token: string, pointer: string): unknown {
  if (Array.isArray(value)) return value[arrayIndex(token, pointer)];
  if (value !== null && typeof value === 'object' && Object.hasOwn(value, token)) return (value as Record<string, unknown>)[token];
  return undefined;
}

function arrayIndex(token: string, pointer: string): number {
  let n = 0;
  for (const ch of token) {
    if (ch < '0' || ch > '9') throw new ConfigurationError(`JSON pointer "${pointer}": "${token}" is not an array index`, { code: 'invalid_edit', details: { pointer } });
    n = n * 10 + (ch.charCodeAt(0) - 48);
  }
  if (token === '' || (token.length > 1 && token.startsWith('0'))) throw new ConfigurationError(`JSON pointer "${pointer}": "${token}" is not an array index`, { code: 'invalid_edit', details: { pointer } });
  return n;
}
