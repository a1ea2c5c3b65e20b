/**
 * JSON in model output: find the candidates in a stated order, parse them,
 * repair common damage, and return the first value that passes the
 * caller's schema (see docs/reading.md).
 *
 * Order: ```` ```json ```` fences, then other fences (whose content starts
 * with `{` or `[`), then balanced objects and arrays in the text outside
 * fences, in the order they start, then an unclosed object or array running
 * to the end of the text (only repaired). Every candidate is first parsed
 * as it is; only when none passes are they repaired, in the same order,
 * with `jsonrepair` (trailing commas, single quotes, comments, a truncated
 * tail...), when they begin as JSON does (a quoted key, a value) and fit
 * in {@link MAX_REPAIR_CHARS}. Within a parsed value, the value itself and then the objects
 * and arrays inside it (depth first) are checked against the schema.
 * @module
 */
import { jsonrepair } from 'jsonrepair';
import type { z } from 'zod';
import { ParseError } from '../core/errors.js';
import { boolean, check, defineOptions, oneOf } from '../core/options.js';
import type { ParseIssue, SafeParseResult } from '../core/parse-result.js';
import { fenceLanguage, scanLines } from './fences.js';
import { readableText } from './lines.js';

/** What a JSON reader expects at the top: an object, an array, or either. */
export type JsonKind = 'object' | 'array' | 'any';

/** Where the JSON came from: a ```` ```json ```` fence, another fence, or the text. */
export type JsonSource = 'json-fence' | 'fence' | 'text';

/** A schema the value must pass: a zod schema, or a function in troupe's safe-parse shape. */
export type JsonValidator<T> = z.ZodType<T> | ((value: unknown) => SafeParseResult<T>);

/** Options of {@link safeFindJson}, {@link findJson} and {@link extractJson}. */
export interface FindJsonOptions<T = unknown> {
  /** What the value must be. Default: `'object'`. */
  kind?: JsonKind;
  /** The schema the value must pass; the first candidate that passes wins. Default: any value of `kind`. */
  schema?: JsonValidator<T>;
  /** Repair damaged candidates with `jsonrepair` when none parses as it is. Default: true. */
  repair?: boolean;
}

const findJsonOptions = defineOptions<FindJsonOptions>('safeFindJson', {
  kind: oneOf(['object', 'array', 'any']),
  schema: check('a zod schema or a function of the value', (v) => typeof v === 'function' || typeof (v as { safeParse?: unknown } | null)?.safeParse === 'function'),
  repair: boolean,
});

/** The JSON a reader found. */
export interface FoundJson<T = unknown> {
  /** The value, as the schema returned it. */
  data: T;
  /** The JSON text of the value (after repair, when repaired). */
  json: string;
  /** Where it came from. */
  source: JsonSource;
  /** True when the candidate was damaged and `jsonrepair` mended it. */
  repaired: boolean;
}

/** Why no JSON passed: `no_json`, `invalid_json`, `wrong_kind`, or the schema's own issues (`schema`). */
export interface JsonIssue extends ParseIssue {
  code: string;
}

/**
 * The most characters handed to `jsonrepair` in one call. Its time grows
 * faster than linearly with the number of repairs in a text, so larger
 * damaged answers are not repaired (the caller's corrective retry asks
 * again instead).
 */
export const MAX_REPAIR_CHARS = 16 * 1024;

/** The most nodes checked against the schema in one call. */
const MAX_CHECKS = 2000;

/**
 * The most candidates parsed in one call (each pass). A failed parse costs
 * an exception, so a text of thousands of decoys stops here; model answers
 * hold a handful.
 */
export const MAX_JSON_CANDIDATES = 256;

/** Values nested deeper than this are not taken as JSON (no answer nests so deep; parsing and checking them would not be cheap). */
export const MAX_JSON_DEPTH = 512;

interface Candidate {
  start: number;
  end: number;
  source: JsonSource;
  /** Only worth trying through the repair (an unclosed value at the end of the text). */
  repairOnly?: boolean;
}

const JSON_LANGUAGES = new Set(['json', 'jsonc', 'json5']);

/** The deepest nesting of brackets (outside strings) between `start` and `end`. */
function depthOf(text: string, start: number, end: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

const isSpaceCode = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d;

/**
 * The candidates of a (normalised) text, in the order they are tried:
 * ```json fences, other fences, then balanced `{...}` and `[...]` spans
 * outside fences sorted by where they start, then the outermost value left
 * open at the end of the text. One pass with a stack: a quote opens a
 * string only inside a bracket (prose has apostrophes and quotes), a string
 * ends at its closing quote or at the end of its line, a closing bracket
 * that does not match the innermost open one clears the stack (no span
 * around it can be JSON), and a fence clears it too.
 */
function candidatesOf(text: string): Candidate[] {
  const jsonFences: Candidate[] = [];
  const otherFences: Candidate[] = [];
  // The end of the balanced span starting at each offset (0: none), and the open brackets (their offsets).
  const endAt = new Int32Array(text.length);
  const stack = new Int32Array(MAX_JSON_DEPTH);
  let depth = 0;
  let inString = false;
  let block: { start: number; end: number; json: boolean } | undefined;
  const finishBlock = () => {
    if (!block) return;
    let { start, end } = block;
    while (start < end && isSpaceCode(text.charCodeAt(start))) start++;
    while (end > start && isSpaceCode(text.charCodeAt(end - 1))) end--;
    const first = text[start];
    if ((first === '{' || first === '[') && depthOf(text, start, end) <= MAX_JSON_DEPTH) {
      (block.json ? jsonFences : otherFences).push({ start, end, source: block.json ? 'json-fence' : 'fence' });
    }
    block = undefined;
  };
  scanLines(text, (line) => {
    if (line.kind === 'open') {
      depth = 0;
      inString = false;
      const start = Math.min(line.end + 1, text.length);
      block = { start, end: start, json: JSON_LANGUAGES.has(fenceLanguage(line.fence!.info)) };
      return;
    }
    if (line.kind === 'code') {
      if (block) block.end = line.end;
      return;
    }
    if (line.kind === 'close') {
      finishBlock();
      return;
    }
    for (let i = line.start; i < line.end; i++) {
      const c = text.charCodeAt(i);
      if (inString) {
        if (c === 0x5c) i++; // backslash: skip the escaped character
        else if (c === 0x22) inString = false;
        continue;
      }
      if (c === 0x7b || c === 0x5b) {
        if (depth === MAX_JSON_DEPTH) depth = 0; // deeper than any JSON a model means
        stack[depth++] = i;
      } else if (c === 0x7d || c === 0x5d) {
        const top = depth > 0 ? stack[depth - 1]! : -1;
        if (top >= 0 && text.charCodeAt(top) === (c === 0x7d ? 0x7b : 0x5b)) {
          depth--;
          endAt[top] = i + 1;
        } else depth = 0;
      } else if (c === 0x22 && depth > 0) inString = true;
    }
    inString = false; // a JSON string never spans lines
  });
  finishBlock(); // an unclosed fence runs to the end of the text
  const candidates = [...jsonFences, ...otherFences];
  for (let start = 0; start < endAt.length; start++) {
    const end = endAt[start]!;
    if (end > 0) candidates.push({ start, end, source: 'text' });
  }
  const unclosed = depth > 0 ? stack[0]! : undefined;
  if (unclosed !== undefined) candidates.push({ start: unclosed, end: text.length, source: 'text', repairOnly: true });
  return candidates;
}

/**
 * True when the value opening at `start` begins as JSON does: an object
 * with a quoted key (or empty), an array with a value. Only such candidates
 * are repaired, so a placeholder such as `{name}` or prose in brackets
 * never becomes JSON.
 */
function looksLikeJson(text: string, start: number): boolean {
  let i = start + 1;
  while (i < text.length && isSpaceCode(text.charCodeAt(i))) i++;
  const c = text[i];
  if (c === undefined) return true;
  if (c === '"' || c === "'") return true;
  if (text[start] === '{') return c === '}';
  if (c === '{' || c === '[' || c === ']' || c === '-' || (c >= '0' && c <= '9')) return true;
  for (const literal of ['true', 'false', 'null']) {
    if (text.startsWith(literal, i) && !/[A-Za-z0-9_]/.test(text[i + literal.length] ?? '')) return true;
  }
  return false;
}

const matchesKind = (value: unknown, kind: JsonKind): boolean =>
  value !== null && typeof value === 'object' && (kind === 'any' || (kind === 'array') === Array.isArray(value));

type Check<T> = { pass: true; data: T } | { pass: false; issues: JsonIssue[] };

function validate<T>(value: unknown, schema: JsonValidator<T> | undefined): Check<T> {
  if (schema === undefined) return { pass: true, data: value as T };
  if (typeof schema === 'function') {
    const result = schema(value);
    return result.success ? { pass: true, data: result.data } : { pass: false, issues: result.issues.map((i) => ({ code: i.code, message: i.message })) };
  }
  const result = schema.safeParse(value);
  if (result.success) return { pass: true, data: result.data };
  return {
    pass: false,
    issues: result.error.issues.map((i) => ({ code: 'schema', message: `${i.path.length > 0 ? i.path.map(String).join('.') : '(root)'}: ${i.message}` })),
  };
}

/** The state of one search: budgets and the best explanation so far. */
class Search<T> {
  parseBudget: number;
  parses = MAX_JSON_CANDIDATES;
  repairBudget = MAX_REPAIR_CHARS;
  repairs = MAX_JSON_CANDIDATES;
  checks = 0;
  parseError: string | undefined;
  schemaIssues: JsonIssue[] | undefined;
  sawValue = false;
  parsedAny = false;
  exhausted = false;

  constructor(
    readonly text: string,
    readonly kind: JsonKind,
    readonly schema: JsonValidator<T> | undefined,
  ) {
    // Every candidate parse is paid for out of a budget linear in the text, so nested brackets stay linear.
    this.parseBudget = 2 * text.length + 4096;
  }

  /** The first node of `value` (itself, then depth first) of the right kind that passes the schema. */
  firstPassing(value: unknown): { data: T; node: unknown } | undefined {
    const stack: unknown[] = [value];
    while (stack.length > 0) {
      const node = stack.pop();
      if (node === null || typeof node !== 'object') continue;
      if (matchesKind(node, this.kind)) {
        this.sawValue = true;
        if (this.checks >= MAX_CHECKS) return undefined;
        this.checks++;
        const checked = validate(node, this.schema);
        if (checked.pass) return { data: checked.data, node };
        this.schemaIssues ??= checked.issues;
      }
      const children = Array.isArray(node) ? node : Object.values(node);
      for (let i = children.length - 1; i >= 0; i--) {
        const child: unknown = children[i];
        if (child !== null && typeof child === 'object') stack.push(child);
      }
    }
    return undefined;
  }

  /** Try `json` (the text of a candidate, possibly repaired). */
  attempt(json: string, candidate: Candidate, repaired: boolean): FoundJson<T> | 'parsed' | 'failed' {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch (error) {
      this.parseError ??= (error as Error).message;
      return 'failed';
    }
    this.parsedAny = true;
    const found = this.firstPassing(value);
    if (!found) return 'parsed';
    const whole = found.node === value;
    return { data: found.data, json: whole ? json : JSON.stringify(found.node), source: candidate.source, repaired };
  }
}

/**
 * Find the JSON value a model meant in `text`: the first candidate (see the
 * module for the order) whose value, or a value inside it, is of `kind` and
 * passes `schema`. Never throws for a string and valid options (a
 * non-string throws a `ConfigurationError`, code `invalid_argument`; an
 * unknown or bad option, `invalid_option`); linear in the text.
 *
 * @example
 * ```ts
 * const found = safeFindJson('Use {name} as the placeholder. Plan: {"steps": [1, 2]}', { schema: z.object({ steps: z.array(z.number()) }) });
 * if (found.success) found.data.data.steps; // [1, 2]
 * ```
 */
export function safeFindJson<T = unknown>(text: string, options: FindJsonOptions<T> = {}): SafeParseResult<FoundJson<T>, JsonIssue> {
  const source = readableText(text, 'the text to find JSON in');
  findJsonOptions.check(options);
  const kind = options.kind ?? 'object';
  const search = new Search(source, kind, options.schema);
  const candidates = candidatesOf(source);
  const failed: Candidate[] = [];
  let coveredUntil = -1;
  for (const candidate of candidates) {
    if (candidate.repairOnly) {
      failed.push(candidate);
      continue;
    }
    if (candidate.source === 'text' && candidate.start < coveredUntil) continue; // inside a value already parsed
    if (!looksLikeJson(source, candidate.start)) continue; // JSON.parse would refuse it, and repair is not tried on it
    const length = candidate.end - candidate.start;
    if (length > search.parseBudget || search.parses === 0) {
      search.exhausted = true;
      break;
    }
    search.parseBudget -= length;
    search.parses--;
    const outcome = search.attempt(source.slice(candidate.start, candidate.end), candidate, false);
    if (typeof outcome === 'object') return { success: true, data: outcome };
    if (outcome === 'parsed') {
      if (candidate.source === 'text') coveredUntil = Math.max(coveredUntil, candidate.end);
    } else failed.push(candidate);
  }
  if (options.repair !== false) {
    coveredUntil = -1;
    for (const candidate of failed) {
      if (candidate.source === 'text' && candidate.start < coveredUntil) continue;
      const length = candidate.end - candidate.start;
      if (length > search.repairBudget || search.repairs === 0 || !looksLikeJson(source, candidate.start)) continue;
      search.repairBudget -= length;
      search.repairs--;
      let repaired: string;
      try {
        repaired = jsonrepair(source.slice(candidate.start, candidate.end));
      } catch {
        continue;
      }
      const outcome = search.attempt(repaired, candidate, true);
      if (typeof outcome === 'object') return { success: true, data: outcome };
      if (outcome === 'parsed' && candidate.source === 'text') coveredUntil = Math.max(coveredUntil, candidate.end);
    }
  }
  return { success: false, issues: explain(search, kind) };
}

function explain<T>(search: Search<T>, kind: JsonKind): JsonIssue[] {
  const what = kind === 'any' ? 'JSON object or array' : `JSON ${kind}`;
  if (search.schemaIssues) return search.schemaIssues;
  if (search.sawValue) return [{ code: 'too_many_candidates', message: `no ${what} that passes the schema among the first ${MAX_CHECKS} checked` }];
  if (search.parsedAny) return [{ code: 'wrong_kind', message: `no ${what} found (the JSON found is of another kind)` }];
  if (search.parseError !== undefined) return [{ code: 'invalid_json', message: `invalid JSON: ${search.parseError}` }];
  return [{ code: 'no_json', message: search.exhausted ? `no ${what} found within the parse budget` : `no ${what} found` }];
}

/**
 * {@link safeFindJson} that throws a `ParseError` (`parse_error`, the
 * issues in `details.issues`) when no candidate passes.
 */
export function findJson<T = unknown>(text: string, options: FindJsonOptions<T> = {}): FoundJson<T> {
  findJsonOptions.check(options, '', 'findJson');
  const result = safeFindJson(text, options);
  if (result.success) return result.data;
  throw new ParseError(`No usable JSON in the text: ${result.issues.map((i) => i.message).join('; ')}`, { details: { issues: result.issues } });
}

/**
 * The JSON text of the first candidate in `text` that parses (repaired when
 * needed) into a value of `kind` passing `schema`, or `undefined`. The
 * second argument is the kind (`'object'`, the default, or `'array'`) or
 * the options of {@link safeFindJson}. Linear in the text.
 *
 * @example
 * ```ts
 * extractJson('Use {name} here. The plan: {"a": 1}'); // '{"a": 1}'
 * extractJson('[worker A] said: [1, 2]', 'array');     // '[1, 2]'
 * ```
 */
export function extractJson(text: string, options: JsonKind | FindJsonOptions = 'object'): string | undefined {
  const result = safeFindJson(text, typeof options === 'string' ? { kind: options } : options);
  return result.success ? result.data.json : undefined;
}
