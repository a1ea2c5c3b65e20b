/**
 * How troupe matches the name of an agent that a model or a person wrote
 * (`@worker:Code Reviewer`, a JSON `"worker"`, a roster's `🏗️ Alejandro`)
 * against the names it knows. One rule, {@link nameKey}, for every reader;
 * see docs/reading.md.
 * @module
 */
import { expectText } from './lines.js';

// U+FFFD is a decoration broken on its way (an emoji read in the wrong encoding): dropped like the emoji it was.
/** Emoji and what builds them (variation selectors, joiners, skin tones, keycaps, flags, tags): decoration, not part of a name. */
const DECORATION_CLASS = '[\\p{Extended_Pictographic}\\u{1F3FB}-\\u{1F3FF}\\u{1F1E6}-\\u{1F1FF}\\u{E0020}-\\u{E007F}\\uFE0E\\uFE0F\\u200D\\u20E3\\uFFFD]';
const DECORATION = new RegExp(DECORATION_CLASS, 'gu');
const HAS_DECORATION = new RegExp(DECORATION_CLASS, 'u');
const SPACE_RUN = /\s+/u;

/** True when `text` holds decorative emoji (or what builds them). */
export function hasDecoration(text: string): boolean {
  return HAS_DECORATION.test(text);
}

/** `text` with every decorative emoji (and what builds them) written as a space. Linear. */
export function withoutDecoration(text: string): string {
  return text.replace(DECORATION, ' ');
}

/** Characters that wrap a name in markdown or quotes, dropped from both ends of each word. */
const isWrapper = (c: string | undefined): boolean => c === '`' || c === '"' || c === "'" || c === '*';

function unwrap(word: string): string {
  let start = 0;
  let end = word.length;
  while (start < end && isWrapper(word[start])) start++;
  while (end > start && isWrapper(word[end - 1])) end--;
  return word.slice(start, end);
}

/** True when every character of `text` is ASCII: then it holds no decoration and is already in NFC. */
function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** {@link wordsOf} for one word of a text (no white space in it), without regular expressions when it is ASCII. */
function wordsOfToken(token: string): string[] {
  if (!isAscii(token)) return wordsOf(token);
  const word = unwrap(token.toLowerCase());
  return word === '' ? [] : [word];
}

/** The words of a name as they are compared: decoration dropped, Unicode-normalised (NFC), lower case, wrappers dropped. Linear. */
function wordsOf(text: string): string[] {
  const words: string[] = [];
  for (const raw of withoutDecoration(text).normalize('NFC').toLowerCase().split(SPACE_RUN)) {
    const word = unwrap(raw);
    if (word !== '') words.push(word);
  }
  return words;
}

/**
 * The form in which two names are compared: decorative emoji dropped,
 * white space runs read as one space and trimmed, backticks, quotes and
 * `*` around each word dropped, Unicode-normalised (NFC) and in lower case.
 * Two names are the same agent when their keys are equal. Linear; a
 * non-string throws a `ConfigurationError` (`invalid_argument`).
 *
 * @example
 * ```ts
 * nameKey('🏗️  Code   Reviewer'); // 'code reviewer'
 * nameKey('`CODE REVIEWER`');      // 'code reviewer'
 * ```
 */
export function nameKey(name: string): string {
  return wordsOf(expectText(name, 'the name given to nameKey')).join(' ');
}

/**
 * True when `a` and `b` name the same agent ({@link nameKey}).
 *
 * @example
 * ```ts
 * sameName('Code Reviewer', '@code reviewer'); // false: `@` is part of the name
 * sameName('Code Reviewer', '**code  reviewer**'); // true
 * ```
 */
export function sameName(a: string, b: string): boolean {
  return nameKey(a) === nameKey(b);
}

/** A name found by {@link NameMatcher.matchAt}. */
export interface NameMatch {
  /** The known name, as it was given to the matcher. */
  name: string;
  /** Offset just past the last character of the text that matched. */
  end: number;
}

interface Node {
  next: Map<string, Node>;
  /** The known name that ends at this node, if any. */
  name?: string;
}

const isBlank = (code: number): boolean => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d || code === 0x0c || code === 0x0b;

/**
 * Known names, matched by {@link nameKey}: as a whole (`find`) or as the
 * longest known name at a position of a text (`matchAt`), so that
 * `@worker:Code Reviewer` finds the worker `Code Reviewer` and not `Code`.
 * The first of two names with the same key wins.
 *
 * @example
 * ```ts
 * const names = new NameMatcher(['Code', 'Code Reviewer']);
 * names.find('code reviewer');                       // 'Code Reviewer'
 * names.matchAt('Code Reviewer check the diff', 0);  // { name: 'Code Reviewer', end: 13 }
 * ```
 */
export class NameMatcher {
  readonly #root: Node = { next: new Map() };
  readonly #byKey = new Map<string, string>();

  /** Index `names`; entries that are not strings, or whose key is empty, are left out. */
  constructor(names: readonly string[]) {
    for (const name of Array.isArray(names) ? names : []) {
      if (typeof name !== 'string') continue;
      const words = wordsOf(name);
      if (words.length === 0) continue;
      const key = words.join(' ');
      if (this.#byKey.has(key)) continue;
      this.#byKey.set(key, name);
      let node = this.#root;
      for (const word of words) {
        let child = node.next.get(word);
        if (!child) {
          child = { next: new Map() };
          node.next.set(word, child);
        }
        node = child;
      }
      node.name = name;
    }
  }

  /** The known name `name` is, if any. */
  find(name: string): string | undefined {
    return this.#byKey.get(nameKey(name));
  }

  /**
   * The longest known name whose words are the white-space separated words
   * of `text` from `from` on (blanks at `from` skipped), ending at the end
   * of a word and before `to` (default: the end of the text). A non-string
   * text throws a `ConfigurationError` (`invalid_argument`). Words that
   * are only decoration are passed over. Reads no further than the known
   * names are long (plus decoration), so a caller that matches at many
   * positions stays linear in the text for a given list of names.
   */
  matchAt(text: string, from: number, to?: number): NameMatch | undefined {
    expectText(text, 'the text given to matchAt');
    const stop = Math.min(to ?? text.length, text.length);
    let node = this.#root;
    let best: NameMatch | undefined;
    let at = Number.isInteger(from) && from > 0 ? from : 0;
    while (node.next.size > 0) {
      while (at < stop && isBlank(text.charCodeAt(at))) at++;
      if (at >= stop) break;
      let end = at;
      while (end < stop && !isBlank(text.charCodeAt(end))) end++;
      for (const word of wordsOfToken(text.slice(at, end))) {
        const child = node.next.get(word);
        if (!child) return best;
        node = child;
      }
      if (node.name !== undefined) best = { name: node.name, end };
      at = end;
    }
    return best;
  }
}
