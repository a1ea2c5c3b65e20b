/** The floor: a bare Kahn loop with a slot count (the same function the scheduler bench uses). */
import { bareKahn } from '../../scheduler/workloads.js';
import type { Engine } from './types.js';

export const run: Engine = (plan, slots, work) => bareKahn(plan, slots, work);
