/**
 * Option checks the patterns share (see `defineOptions` in
 * src/core/options.ts): an agent, a list of runnables, delegation hooks.
 * @module
 */
import { check, listOf, object, runnable, type OptionCheck } from '../core/options.js';
import { stallDetectorOptions } from '../reflection/stall.js';

/** An agent (made by `agent()`: it has `converse()`). */
export const agentCheck: OptionCheck = check('an agent', (v) => typeof v === 'object' && v !== null && typeof (v as { converse?: unknown }).converse === 'function');

/** A list of runnables. */
export const runnables: OptionCheck = listOf(runnable);

/** Delegation hooks (`enabled`, `inputFilter`, `beforeDelegation`). */
export const delegationOption: OptionCheck = object;

/** Stall detector options (a `stall` group, checked against the `StallDetector`'s description). */
export const stallOption = stallDetectorOptions;
