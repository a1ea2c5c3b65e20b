import { describe, expect, it } from 'vitest';
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
