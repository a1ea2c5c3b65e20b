import type { Plan } from '../../../src/plan/index.js';

/** Runs every chunk of `plan` once its dependencies are done, at most `slots` at a time, awaiting `work(position)` for each. */
export type Engine = (plan: Plan, slots: number, work: (position: number) => Promise<unknown>) => Promise<void>;
