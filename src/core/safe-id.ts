/**
 * The one rule for ids that come from outside and become store keys or
 * path segments: run ids over HTTP, tenants, request ids, thread ids.
 * @module
 */

/** The longest id accepted. */
export const MAX_ID_LENGTH = 128;

const isIdChar = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2d || c === 0x5f || c === 0x2e;

/**
 * True when `id` is a safe id: 1 to {@link MAX_ID_LENGTH} characters of
 * `A-Z a-z 0-9 - _ .`, starting with a letter or digit (so never `.`, `..`,
 * a path, or a key segment separator). One pass over the text.
 */
export function isSafeId(id: unknown): id is string {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) return false;
  const first = id.charCodeAt(0);
  if (first === 0x2d || first === 0x5f || first === 0x2e) return false;
  for (let i = 0; i < id.length; i++) if (!isIdChar(id.charCodeAt(i))) return false;
  return true;
}
