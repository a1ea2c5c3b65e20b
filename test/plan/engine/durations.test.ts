import { describe, expect, it } from 'vitest';
import { DurationWindow } from '../../../src/plan/engine/durations.js';

describe('DurationWindow', () => {
  it('expects the mean of the durations longer than what an attempt has run, or what it has run when none is', () => {
    const w = new DurationWindow();
    expect(w.count).toBe(0);
    expect(w.expected(7)).toBe(7);
    for (const ms of [10, 40, 20, 30]) w.add(ms);
    expect(w.expected(0)).toBe(25);
    expect(w.expected(10)).toBe(30); // 20, 30, 40
    expect(w.expected(25)).toBe(35);
    expect(w.expected(40)).toBe(40);
    expect(w.expected(55)).toBe(55);
  });

  it('keeps the last `size` durations, duplicates included', () => {
    const w = new DurationWindow(3);
    for (const ms of [5, 5, 100, 1, 2]) w.add(ms);
    expect(w.count).toBe(3);
    expect(w.expected(0)).toBeCloseTo(103 / 3);
    w.add(2);
    expect(w.expected(0)).toBeCloseTo(5 / 3); // 1, 2, 2
    expect(w.expected(1)).toBe(2);
  });

  it('agrees with a direct computation on random durations', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const w = new DurationWindow(16);
    const all: number[] = [];
    for (let i = 0; i < 200; i++) {
      const ms = Math.floor(random() * 50);
      w.add(ms);
      all.push(ms);
      const last = all.slice(-16);
      const at = Math.floor(random() * 60);
      const longer = last.filter((d) => d > at);
      expect(w.expected(at)).toBeCloseTo(longer.length === 0 ? at : longer.reduce((a, b) => a + b, 0) / longer.length, 9);
    }
  });
});
