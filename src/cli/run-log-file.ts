/**
 * Reading a run-log file the command line is given: an exported run
 * (`{ runId?, events: [...] }`) or JSON lines, as `events.jsonl` holds them,
 * read by the kernel's run-log reader (one rule for a torn last line).
 * @module
 */
import { ParseError } from '../core/errors.js';
import { isEvent, parseJsonLines, type TornRecord } from '../core/run-log-reader.js';
import { readableText } from '../text/lines.js';

/**
 * The records of a run-log file and its run id (the exported run's, else
 * the first event's). JSON lines are read by the run-log reader's rule: a
 * torn last line is left out and reported in `torn`, a line that is not
 * JSON elsewhere is a `ParseError` naming it; records that are not events
 * are kept (the report counts them). A file with no run event is a
 * `ParseError`. Linear in the file.
 */
export function parseRunLogFile(raw: string, file: string): { events: unknown[]; runId: string; torn?: TornRecord } {
  const text = readableText(raw, file);
  let events: unknown[] | undefined;
  let runId: string | undefined;
  let torn: TornRecord | undefined;
  if (text.trimStart().startsWith('{')) {
    try {
      const doc = JSON.parse(text) as { events?: unknown; runId?: unknown };
      if (Array.isArray(doc.events)) events = doc.events;
      if (typeof doc.runId === 'string') runId = doc.runId;
    } catch {
      // not one document: JSON lines below
    }
  }
  if (events === undefined) ({ records: events, torn } = parseJsonLines(text, file));
  const first = events.find(isEvent);
  if (!first) throw new ParseError(`${file} holds no run events (expected an events.jsonl file or an exported run)`, { details: { file } });
  return { events, runId: runId ?? first.runId, ...(torn ? { torn } : {}) };
}
