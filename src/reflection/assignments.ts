/**
 * The assignment protocol: how an orchestrator hands tasks to workers, as
 * `@worker:<name>` blocks or as a JSON array `[{ "worker", "task" }]`.
 * @module
 */
import { ModelBehaviorError } from '../core/errors.js';
import type { SafeParseResult } from '../core/parse-result.js';
import { scanSpans } from '../text/fences.js';
import { safeFindJson } from '../text/json.js';
import { readableText } from '../text/lines.js';
import { NameMatcher } from '../text/names.js';

/** One task for one worker. */
export interface Assignment {
  /** The worker's canonical name (as given in the `workers` list). */
  worker: string;
  /** What the worker must do. */
  task: string;
}

/** What {@link parseAssignments} found. */
export interface ParsedAssignments {
  /** Assignments in the order their workers were first named, one per worker. */
  assignments: Assignment[];
  /** Names that match no worker, in order of appearance, without repeats. */
  unmatched: string[];
}

/** The separator put between two tasks given to the same worker. */
export const TASK_SEPARATOR = '\n\n---\n\n';

const WORKER_MARK = '@worker:';
const END_MARK = '@end';
/** Longer names match no worker; they are reported cut to this length. */
const MAX_NAME = 200;

/** Collects assignments: canonical names, merging, skipping empty tasks. */
class Collector {
  readonly names: NameMatcher;
  readonly #tasks = new Map<string, string[]>();
  readonly #unmatched = new Set<string>();

  constructor(workers: readonly string[]) {
    this.names = new NameMatcher(workers);
  }

  /** A task for the worker written `rawName` (matched by `nameKey`), or for `known`, a name already matched. */
  add(rawName: string, rawTask: string, known?: string): void {
    const worker = known ?? this.#match(rawName);
    if (worker === undefined) return;
    const task = rawTask.trim();
    if (task === '') return;
    const list = this.#tasks.get(worker);
    if (list) list.push(task);
    else this.#tasks.set(worker, [task]);
  }

  #match(rawName: string): string | undefined {
    const name = cleanName(rawName);
    if (name === '') return undefined;
    if (name.length > MAX_NAME) {
      this.#unmatched.add(`${name.slice(0, MAX_NAME)}…`);
      return undefined;
    }
    const worker = this.names.find(name);
    if (worker === undefined) this.#unmatched.add(name);
    return worker;
  }

  result(): ParsedAssignments {
    return {
      assignments: [...this.#tasks].map(([worker, tasks]) => ({ worker, task: tasks.join(TASK_SEPARATOR) })),
      unmatched: [...this.#unmatched],
    };
  }
}

/** Strip white space, backticks and quotes around a worker name. */
const strip = (c: string | undefined): boolean => c === '`' || c === '"' || c === "'" || c === ' ' || c === '\t' || c === '*';

function cleanName(raw: string): string {
  let start = 0;
  let end = raw.length;
  while (start < end && strip(raw[start])) start++;
  while (end > start && strip(raw[end - 1])) end--;
  return raw.slice(start, end);
}

const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v';

/** A JSON array holding at least one `{ "worker", "task" }` item with string values. */
function assignmentList(value: unknown): SafeParseResult<Array<{ worker: string; task: string }>> {
  const items = Array.isArray(value)
    ? value.filter((item): item is { worker: string; task: string } => {
        if (item === null || typeof item !== 'object') return false;
        const { worker, task } = item as { worker?: unknown; task?: unknown };
        return typeof worker === 'string' && typeof task === 'string';
      })
    : [];
  return items.length > 0 ? { success: true, data: items } : { success: false, issues: [{ code: 'no_assignments', message: 'not a list of { worker, task } items' }] };
}

/** Assignments from a JSON array (see {@link safeFindJson} for where it is looked for); false when the text holds none. */
function fromJson(text: string, collector: Collector): boolean {
  const found = safeFindJson(text, { kind: 'array', schema: assignmentList });
  if (!found.success) return false;
  for (const { worker, task } of found.data.data) collector.add(worker, task);
  return true;
}

/** True when `text` has `mark` (lower case) at `at`, in any case. */
function markAt(text: string, at: number, mark: string): boolean {
  return text.length - at >= mark.length && text.slice(at, at + mark.length).toLowerCase() === mark;
}

/**
 * Assignments from `@worker:` blocks outside fenced code blocks. One pass
 * over the text; at each `@worker:` the longest known name is looked for
 * (reading no further than the names are long), else the first word is
 * the (unknown) name.
 */
function fromText(text: string, collector: Collector): void {
  let open: { name: string; known: string | undefined; from: number } | undefined;
  const close = (to: number) => {
    if (open) collector.add(open.name, text.slice(open.from, to), open.known);
    open = undefined;
  };
  let i = text.indexOf('@'); // the next '@' not yet looked at, found once for every line
  scanSpans(text, (lineStart, lineEnd, kind) => {
    if (kind !== 'text') return; // a fenced block is quoted text: part of the open task, never a marker
    if (i >= 0 && i < lineStart) i = text.indexOf('@', lineStart);
    while (i >= 0 && i < lineEnd) {
      const atBoundary = i === lineStart || isSpace(text[i - 1]);
      if (atBoundary && markAt(text, i, WORKER_MARK)) {
        close(i);
        let j = i + WORKER_MARK.length;
        while (j < lineEnd && (text[j] === ' ' || text[j] === '\t')) j++;
        const known = collector.names.matchAt(text, j, lineEnd);
        if (known) open = { name: known.name, known: known.name, from: known.end };
        else {
          const nameStart = j;
          while (j < lineEnd && !isSpace(text[j])) j++;
          open = { name: text.slice(nameStart, j), known: undefined, from: j };
        }
        i = text.indexOf('@', open.from);
        continue;
      }
      if (atBoundary && markAt(text, i, END_MARK) && (i + END_MARK.length === lineEnd || isSpace(text[i + END_MARK.length]))) {
        close(i);
      }
      i = text.indexOf('@', i + 1);
    }
  });
  close(text.length);
}

/**
 * Read the tasks an orchestrator assigned. Text protocol: `@worker:<name>`
 * at the start of a line or after white space, then the task up to `@end`,
 * the next `@worker:` or the end of the text; markers inside fenced code
 * blocks are quoted text (part of the open task) and do not count. A JSON
 * array `[{ "worker", "task" }]` (in a fence or in the text, found as
 * `safeFindJson` finds JSON) is used when it holds such items. Names match
 * `workers` case-insensitively and exactly (no fuzzy matching); unknown
 * names go to `unmatched`. Linear time; a non-string text throws a
 * `ConfigurationError` (`invalid_argument`).
 *
 * @example
 * ```ts
 * parseAssignments('@worker:a\nBuild it.\n@end', ['A']);
 * // { assignments: [{ worker: 'A', task: 'Build it.' }], unmatched: [] }
 * ```
 */
export function parseAssignments(text: string, workers: readonly string[]): ParsedAssignments {
  const source = readableText(text, 'the text of parseAssignments');
  const collector = new Collector(Array.isArray(workers) ? workers : []);
  if (!fromJson(source, collector)) fromText(source, collector);
  return collector.result();
}

/**
 * {@link parseAssignments} that fails when no task was assigned:
 * `{ success: false, issues }` with code `no_assignments` (and the unknown
 * names, if any, in the message).
 */
export function safeParseAssignments(text: string, workers: readonly string[]): SafeParseResult<ParsedAssignments> {
  const parsed = parseAssignments(text, workers);
  if (parsed.assignments.length > 0) return { success: true, data: parsed };
  const unknown = parsed.unmatched.length > 0 ? ` (unknown workers: ${parsed.unmatched.join(', ')})` : '';
  return { success: false, issues: [{ code: 'no_assignments', message: `No task was assigned to a known worker${unknown}` }] };
}

/** {@link parseAssignments} that throws a `ModelBehaviorError` (`no_assignments`) when no task was assigned. */
export function requireAssignments(text: string, workers: readonly string[]): ParsedAssignments {
  const result = safeParseAssignments(text, workers);
  if (result.success) return result.data;
  throw new ModelBehaviorError(result.issues[0]!.message, { code: 'no_assignments', details: { workers: [...workers] } });
}
