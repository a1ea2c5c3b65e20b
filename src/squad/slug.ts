/**
 * Names of squad members and their agent folders.
 * @module
 */
import { expectText } from '../text/lines.js';
import { hasDecoration, withoutDecoration } from '../text/names.js';

/**
 * What a squad agent folder name must match: letters (of any script, in
 * lower case where the script has cases), digits and combining marks, in
 * runs joined by single `-`. No `.`, `/` or `\\`, so it never leaves `agents/`.
 */
export const SLUG_PATTERN = /^[\p{L}\p{N}\p{M}]+(?:-[\p{L}\p{N}\p{M}]+)*$/u;

/** True when `slug` is a valid folder name: {@link SLUG_PATTERN}, in lower case. */
export function isSlug(slug: string): boolean {
  return SLUG_PATTERN.test(slug) && slug === slug.toLowerCase();
}

/**
 * A roster name as people call the member: decorative emoji removed
 * (`🏗️ Alejandro` → `Alejandro`) and white space collapsed. A name that is
 * nothing but decoration is kept as it is. Linear. The decoration is the
 * one that name matching drops too (`nameKey`, `src/text/names.ts`), so a
 * roster name and an `@worker:` name are compared by one rule.
 *
 * @example
 * ```ts
 * displayName('🏗️ Alejandro'); // 'Alejandro'
 * displayName('李明 🚀');      // '李明'
 * ```
 */
export function displayName(name: string): string {
  const text = expectText(name, 'the name given to displayName');
  if (!hasDecoration(text)) return text.trim();
  const stripped = withoutDecoration(text).replace(/\s+/g, ' ').trim();
  return stripped === '' ? text.trim() : stripped;
}

/**
 * The kebab-case folder name of a display name: decoration dropped, lower
 * case, accents of Latin letters dropped, letters and digits of every
 * script kept (`李明` stays `李明`), anything else becomes `-`; at most 64
 * characters. `''` when nothing is left.
 *
 * @example
 * ```ts
 * squadSlug('Code Reviewer'); // 'code-reviewer'
 * squadSlug('Zoë Ünicorn');   // 'zoe-unicorn'
 * squadSlug('李明');          // '李明'
 * squadSlug('../../etc');     // 'etc'
 * ```
 */
export function squadSlug(name: string): string {
  const slug = displayName(expectText(name, 'the name given to squadSlug'))
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
  const points = [...slug];
  return (points.length > 64 ? points.slice(0, 64).join('') : slug).replace(/-+$/, '');
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
