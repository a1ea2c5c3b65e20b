import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { StuckDetector } from '../../src/coordination/stuck.js';

describe('StuckDetector', () => {
  it('checks a silent worker after twice the expected time, then reports it stuck', () => {
    const stuck = new StuckDetector({ expectedTaskMs: 1000, statusTimeoutMs: 500 });
    stuck.working('w1', 't1', 0);
    expect(stuck.nextDeadline()).toBe(2001);
    expect(stuck.check(2000)).toEqual([]);
    expect(stuck.check(2001)).toEqual([{ type: 'status-check', worker: 'w1', task: 't1', silentMs: 2001 }]);
    expect(stuck.state('w1')).toBe('checking');
    expect(stuck.check(2200)).toEqual([]);
    expect(stuck.check(2501)).toEqual([{ type: 'stuck', worker: 'w1', task: 't1', silentMs: 2501 }]);
    stuck.idle('w2', 100);
    stuck.stopped('w1', 2501);
    expect(stuck.timings()).toEqual([
      { worker: 'w1', state: 'stopped', since: 2501, lastHeard: 0 },
      { worker: 'w2', state: 'idle', since: 100, lastHeard: 100 },
    ]);
    expect(stuck.check(10_000)).toEqual([]);
    expect(stuck.nextDeadline()).toBeUndefined();
  });

  it('an answer resets the silence; completed tasks set the average', () => {
    const stuck = new StuckDetector({ expectedTaskMs: 1000 });
    expect(stuck.statusTimeoutMs).toBe(60_000);
    stuck.working('w1', 't1', 0);
    stuck.check(2001);
    stuck.heard('w1', 2100);
    expect(stuck.state('w1')).toBe('working');
    expect(stuck.check(4000)).toEqual([]);
    stuck.finished('w1', 300, 4000);
    stuck.finished('w2', 100, 4000);
    expect(stuck.averageMs).toBe(200);
    expect(stuck.thresholdMs).toBe(400);
    stuck.working('w1', 't2', 5000);
    expect(stuck.check(5401)).toHaveLength(1);
    expect(() => new StuckDetector({ expectedTaskMs: 0 })).toThrow('Expected `stuck.expectedTaskMs` to be a positive number, got 0 (number)');
  });
});

describe('StuckDetector deadlines', () => {
  /** Follow the detector's own deadlines from a start; every one must bring an action, up to the stuck report. */
  function follow(stuck: StuckDetector, start: number): string[] {
    stuck.working('w1', 't1', start);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const at = stuck.nextDeadline();
      if (at === undefined) break;
      const actions = stuck.check(at);
      seen.push(actions.map((a) => a.type).join(',') || `nothing at ${at}`);
      if (actions.some((a) => a.type === 'stuck')) break;
    }
    return seen;
  }

  it('are reached at fractional clock times (an average task of 33.333... ms)', () => {
    const stuck = new StuckDetector({ expectedTaskMs: 1000, statusTimeoutMs: 300 });
    stuck.restoreDurations([100 / 3]); // an average of 33.333... ms: the threshold is fractional
    expect(follow(stuck, 214.06666666666666 - 2 * (100 / 3) - 1)).toEqual(['status-check', 'stuck']);
  });

  it('are reached whatever the start, the average and the status time-out', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1e7, noNaN: true }),
        fc.array(fc.double({ min: 0.001, max: 1e5, noNaN: true }), { maxLength: 4 }),
        fc.double({ min: 0.001, max: 1e5, noNaN: true }),
        (start, durations, statusTimeoutMs) => {
          const stuck = new StuckDetector({ expectedTaskMs: 1000, statusTimeoutMs });
          stuck.restoreDurations(durations);
          expect(follow(stuck, start)).toEqual(['status-check', 'stuck']);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
