/**
 * Reading a run-log file the command line is given: an exported run
 * (`{ runId?, events: [...] }`) or JSON lines, as `events.jsonl` holds them.
 * @module
 */
import { ParseError } from '../core/errors.js';
import { readableText } from '../text/lines.js';

/**
 * The events of a run-log file and its run id (the exported run's, else the
 * first event's). A torn or foreign line of JSON lines is skipped; a file
 * with no run event is a `ParseError`. Linear in the file.
 */
export function parseRunLogFile(raw: string, file: string): { events: unknown[]; runId: string } {
  const text = readableText(raw, file);
  let events: unknown[] | undefined;
  let runId: string | undefined;
  if (text.trimStart().startsWith('{')) {
    try {
      const doc = JSON.parse(text) as { events?: unknown; runId?: unknown };
      if (Array.isArray(doc.events)) events = doc.events;
      if (typeof doc.runId === 'string') runId = doc.runId;
    } catch {
      // not one document: JSON lines below
    }
  }
  if (events === undefined) {
    events = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        events.push(JSON.parse(line) as unknown);
      } catch {
        // a torn last line, or a line that is not JSON: the report counts what it skips
      }
    }
  }
  const first = events.find((e): e is { runId: string } => typeof e === 'object' && e !== null && typeof (e as { runId?: unknown }).runId === 'string');
  if (!first) throw new ParseError(`${file} holds no run events (expected an events.jsonl file or an exported run)`, { details: { file } });
  return { events, runId: runId ?? first.runId };
}
