// The one run-log reader (src/core/run-log-reader.ts): one test of what is
// an event, one JSON-lines parser, one rule for a torn last line, checked on
// random torn files; and the file store, the command line and recordings
// reading by that rule.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRecording } from '../../src/adapters/recording.js';
import { parseRunLogFile } from '../../src/cli/run-log-file.js';
import { ParseError } from '../../src/core/errors.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { isEvent, notAnEvent, parseJsonLines, readRunEvents, sortRecords } from '../../src/core/run-log-reader.js';
import { runEventsStream } from '../../src/core/run-log-writer.js';
import { fileStore } from '../../src/persistence/file-store.js';

/** A record as a writer appends it (JSON, never a raw line end inside). */
const record = fc.oneof(
  fc.record({ type: fc.constantFrom('run.started', 'op.started', 'warning'), runId: fc.string(), time: fc.integer(), text: fc.string() }),
  fc.jsonValue().filter((v) => v !== null && typeof v === 'object'),
);
const lineEnd = fc.constantFrom('\n', '\r\n', '\r');

/** Records written as JSON lines, each with its line end, and the text. */
const written = fc.array(fc.tuple(record, lineEnd), { maxLength: 12 }).map((rows) => {
  const lines = rows.map(([r, end]) => `${JSON.stringify(r)}${end}`);
  return { records: rows.map(([r]) => JSON.parse(JSON.stringify(r)) as unknown), lines, text: lines.join('') };
});

describe('parseJsonLines: the one rule for a torn last line', () => {
  it('reads the records whose line end was written and reports the rest as torn, wherever a write was cut', () => {
    fc.assert(
      fc.property(written, fc.nat(), ({ records, lines, text }, cut) => {
        const at = text.length === 0 ? 0 : cut % (text.length + 1);
        const read = parseJsonLines(text.slice(0, at), 'log');
        // A line is whole once its first line-end character is written (the `\r` of a `\r\n` ends it).
        const starts = lines.map((_, i) => lines.slice(0, i).join('').length);
        let whole = 0;
        while (whole < lines.length && starts[whole]! + lines[whole]!.replace(/\r?\n$|\r$/, '').length + 1 <= at) whole++;
        expect(read.records).toEqual(records.slice(0, whole));
        expect(read.count).toBe(whole);
        // Torn: some of the next line was written (JSON never starts with white space).
        expect(read.torn !== undefined).toBe(whole < lines.length && at > starts[whole]!);
      }),
      { numRuns: 500 },
    );
  });

  it('leaves a torn line out even when what was written of it parses', () => {
    expect(parseJsonLines('{"i":0}\n{"i":1}', 'log')).toMatchObject({ records: [{ i: 0 }], count: 1, torn: { reason: expect.stringMatching(/line 2, 7 characters\) has no line end/) } });
    expect(parseJsonLines('{"i":0}\n12', 'log').records).toEqual([{ i: 0 }]);
    expect(parseJsonLines('{"i":0}\n  \n', 'log')).toEqual({ records: [{ i: 0 }], count: 1 });
    expect(parseJsonLines('\uFEFF{"i":0}\r\n\r\n{"i":1}\r', 'log')).toEqual({ records: [{ i: 0 }, { i: 1 }], count: 2 });
  });

  it('counts records before `from` without returning them', () => {
    fc.assert(
      fc.property(written, fc.nat(20), ({ records, text }, from) => {
        const read = parseJsonLines(text, 'log', from);
        expect(read.records).toEqual(records.slice(from));
        expect(read.count).toBe(records.length);
      }),
    );
  });

  it('throws a ParseError naming the line for a whole line that is not JSON, and nothing else for any text', () => {
    expect(() => parseJsonLines('{"i":0}\nnot json\n{"i":2}\n', 'run.jsonl')).toThrow(/^Line 2 of run\.jsonl is not valid JSON/);
    fc.assert(
      fc.property(fc.string(), (text) => {
        try {
          parseJsonLines(text, 'log');
        } catch (error) {
          expect(error).toBeInstanceOf(ParseError);
          expect((error as ParseError).details['line']).toBeGreaterThan(0);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('reads many short lines of every line end (its time: npm run bench -- parsers)', () => {
    const text = '{}\r'.repeat(100_000) + '{}\n'.repeat(100_000) + '{}';
    expect(parseJsonLines(text, 'log')).toMatchObject({ count: 200_000, torn: expect.anything() });
  });
});

describe('the readers of JSON lines use the one rule', () => {
  it('the file store reads a random torn file as parseJsonLines does, and its next append starts on a new line', async () => {
    await fc.assert(
      fc.asyncProperty(written, fc.nat(), async ({ text }, cut) => {
        const dir = mkdtempSync(join(tmpdir(), 'troupe-torn-'));
        const torn = text.slice(0, text.length === 0 ? 0 : cut % (text.length + 1));
        writeFileSync(join(dir, 'log.jsonl'), torn);
        const expected = parseJsonLines(torn, 'stream "log"');
        const store = fileStore(dir, { fsync: false });
        const read = await store.read('log');
        expect(read.records).toEqual(expected.records);
        expect(read.next).toBe(expected.count);
        expect(read.torn).toEqual(expected.torn);
        await store.append('log', { after: true });
        const again = await fileStore(dir).read('log');
        expect(again.records).toEqual([...expected.records, { after: true }]);
        expect(again.torn).toBeUndefined();
        expect(readFileSync(join(dir, 'log.jsonl'), 'utf8').endsWith('{"after":true}\n')).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('the command line and recordings leave a torn last line out and refuse a bad line elsewhere', () => {
    const event = { type: 'run.started', runId: 'r1', time: 1, runnable: 'a', input: 'q' };
    expect(parseRunLogFile(`${JSON.stringify(event)}\n{"type":"op.sta`, 'run.jsonl')).toMatchObject({ runId: 'r1', events: [event], torn: { reason: expect.stringMatching(/run\.jsonl/) } });
    expect(() => parseRunLogFile(`${JSON.stringify(event)}\nnot json\n${JSON.stringify(event)}\n`, 'run.jsonl')).toThrow(/Line 2 of run\.jsonl/);
    const turn = JSON.stringify({ v: 1, adapter: 's', agent: 'a', session: 1, turn: 1, spec: { agent: 'a' }, input: 'x', reply: { text: 'y', toolCalls: [] } });
    expect(parseRecording(`${turn}\n${turn.slice(0, -1)}`)).toHaveLength(1);
    expect(() => parseRecording(`${turn}\n${turn.slice(0, -1)}\n`)).toThrow(/Line 2 of the recording/);
  });
});

describe('isEvent and readRunEvents', () => {
  it('an event is an object with a type, a run id and a finite time', () => {
    expect(isEvent({ type: 'warning', runId: 'r', time: 0 })).toBe(true);
    for (const [value, reason] of [
      [null, /not an object/],
      [[1], /not an object \(array\)/],
      [{ runId: 'r', time: 0 }, /type/],
      [{ type: '', runId: 'r', time: 0 }, /type/],
      [{ type: 'x', time: 0 }, /runId/],
      [{ type: 'x', runId: 'r', time: Number.NaN }, /time/],
    ] as const) {
      expect(isEvent(value)).toBe(false);
      expect(notAnEvent(value)).toMatch(reason);
    }
  });

  it('reads a run log from a position, with each event position and the records that are not events', async () => {
    const store = memoryStore();
    const stream = runEventsStream('r1');
    for (const r of [{ type: 'run.started', runId: 'r1', time: 1 }, 'junk', { type: 'warning', runId: 'r1', time: 2 }, { type: 1 }, { type: 'run.completed', runId: 'r1', time: 3 }]) await store.append(stream, r);
    const all = await readRunEvents('r1', { store });
    expect(all.events.map((e) => e.type)).toEqual(['run.started', 'warning', 'run.completed']);
    expect(all.positions).toEqual([0, 2, 4]);
    expect(all.skipped).toEqual([{ index: 1, reason: 'not an object (string)' }, { index: 3, reason: 'no event `type`' }]);
    expect(all.next).toBe(5);
    const tail = await readRunEvents('r1', { store, from: 2 });
    expect(tail.positions).toEqual([2, 4]);
    expect(tail.skipped.map((s) => s.index)).toEqual([3]);
    expect(sortRecords(['x'], 7).skipped).toEqual([{ index: 7, reason: 'not an object (string)' }]);
    expect(await readRunEvents('never', { store })).toEqual({ events: [], positions: [], skipped: [], next: 0 });
  });
});
