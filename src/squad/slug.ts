/**
 * Names of squad members and their agent folders.
 * @module
 */
import { expectText } from '../text/lines.js';

/** What a squad agent folder name must match. */
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * The kebab-case folder name of a display name: lower case, accents dropped,
 * anything outside `[a-z0-9]` becomes `-`. `''` when nothing is left.
 *
 * @example
 * ```ts
 * squadSlug('Code Reviewer'); // 'code-reviewer'
 * squadSlug('../../etc');     // 'etc'
 * ```
 */
export function squadSlug(name: string): string {
  return expectText(name, 'the name given to squadSlug')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
}

/** The members squad runs as infrastructure rather than as workers, by default. */
export const DEFAULT_INFRASTRUCTURE: readonly string[] = ['scribe', 'ralph', 'coordinator', 'squad', '@*'];

/**
 * True when a member is infrastructure: its name or slug equals an entry
 * (case-insensitive), or starts with an entry's text before a trailing `*`.
 */
export function isInfrastructure(name: string, slug: string, patterns: readonly string[]): boolean {
  const candidates = [name.trim().toLowerCase(), slug];
  return patterns.some((raw) => {
    const pattern = raw.trim().toLowerCase();
    if (pattern.endsWith('*')) {
      const prefix = pattern.slice(0, -1);
      return candidates.some((c) => c.startsWith(prefix));
    }
    return candidates.includes(pattern);
  });
}
