import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Cell } from '../fixtures/faults/matrix.js';
import { bundled } from '../helpers/bundle.js';

const root = join(import.meta.dirname, '..', '..');
const PATTERNS = ['agent tool loop', 'handoff', 'router', 'advisors', 'broadcast', 'sequential', 'team', 'reflect', 'orchestrate', 'executePlan', 'coordinate'];
const FAULTS = ['plain-error', 'thrown-string', 'open-session', 'partial-stream', 'null-turn', 'undefined-turn'];
/** Statuses that say "this ended because of failures" (loops and plans classify failures instead of rejecting). */
const FAILURE_STATUSES = ['error-budget', 'failed'];

let cells: Cell[] = [];
let leftover: string[] = [];

describe('the fault matrix: every pattern × every adapter failure', () => {
  beforeAll(async () => {
    // Its own process: an unhandled rejection kills it (--unhandled-rejections=strict),
    // and what is still alive at its end is only what the runs left behind.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--unhandled-rejections=strict', bundled(join(root, 'test/fixtures/faults/matrix.ts'))],
      { cwd: root, maxBuffer: 16 * 1024 * 1024 },
    );
    ({ cells, leftover } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { cells: Cell[]; leftover: string[] });
  }, 120_000);

  it('runs every cell without an unhandled rejection, and leaves no timer or handle behind', () => {
    expect(cells.map((c) => `${c.pattern} × ${c.fault}`)).toEqual(PATTERNS.flatMap((p) => FAULTS.map((f) => `${p} × ${f}`)));
    expect(leftover).toEqual([]);
  });

  describe.each(PATTERNS)('%s', (pattern) => {
    it.each(FAULTS)('× %s: a TroupeError keeping the cause, or a failure status', (fault) => {
      const cell = cells.find((c) => c.pattern === pattern && c.fault === fault)!;
      if (cell.settled === 'resolved') {
        expect(FAILURE_STATUSES).toContain(cell.status);
        return;
      }
      expect(cell.typed).toBe(true);
      if (fault === 'null-turn' || fault === 'undefined-turn') {
        expect(cell.chain.map((e) => e.name)).toContain('ModelBehaviorError');
      } else {
        expect(cell.chain.map((e) => e.name)).toContain('AdapterError');
        expect(cell.originalKept).toBe(true);
      }
    });
  });
});
