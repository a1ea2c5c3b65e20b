/**
 * What the vendor adapters share: loading their optional peer package
 * (`loadPeer`, from the kernel) and reading tool-call arguments.
 * @module
 */
/** @internal */
export { loadPeer } from '../core/peer.js';

/** Parse a tool call's JSON argument text; `undefined` when it is not valid JSON. */
export function parseArguments(raw: string): { arguments: unknown; rawArguments?: string } {
  if (raw.trim() === '') return { arguments: {} };
  try {
    return { arguments: JSON.parse(raw) as unknown };
  } catch {
    return { arguments: undefined, rawArguments: raw };
  }
}
