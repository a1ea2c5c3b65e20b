/**
 * Role configurations: what a worker of each role is told, which tools it
 * prefers, and which model and temperature it uses. Built-in defaults for
 * every role, merged with the caller's overrides.
 * @module
 */
import type { ModelAdapter } from '../../core/adapter.js';
import type { ChunkRole } from './plan.js';

/** How a worker of one role is set up. */
export interface RoleConfig {
  /** The system instructions of the role's sessions. */
  system: string;
  /** Names of the tools the role prefers (handed to adapters as metadata and used by custom runners). */
  preferredTools: string[];
  /**
   * The tools the role's workers may call: names of the plan's `tools` (an
   * allow-list; the others are not given to them). Default: every tool.
   */
  tools?: string[];
  /** The model, when the role needs a different one. */
  model?: string;
  /** The sampling temperature. */
  temperature?: number;
  /** The adapter (object or registered name), when the role needs a different one. */
  adapter?: ModelAdapter | string;
  /** The usual duration of a chunk of this role in milliseconds: the estimate of its chunks that carry none. */
  estimatedMs?: number;
}

/** Overrides per role; every field optional. */
export type RoleOverrides = Partial<Record<ChunkRole, Partial<RoleConfig>>>;

const common = 'You are one worker of a team executing a plan. Do only the task you are given; state clearly what you found or changed, and what you could not do.';

/** The built-in configuration of every role. */
export const defaultRoles: Readonly<Record<ChunkRole, Readonly<RoleConfig>>> = Object.freeze({
  Generic: { system: `${common}`, preferredTools: [] },
  Planning: {
    system: `${common} You break problems into small, independent steps with explicit dependencies.`,
    preferredTools: ['read_file', 'search'],
    temperature: 0.2,
  },
  CodeAnalysis: {
    system: `${common} You read code carefully, cite files and lines, and never guess at behaviour you have not read.`,
    preferredTools: ['read_file', 'search'],
    temperature: 0.1,
  },
  MemoryDiagnostics: {
    system: `${common} You diagnose memory leaks: find what retains memory (listeners, caches, timers, closures), show the evidence and propose a fix.`,
    preferredTools: ['read_file', 'search', 'heap_snapshot'],
    temperature: 0.1,
  },
  Performance: {
    system: `${common} You measure before and after, name the bottleneck with evidence, and propose the smallest change that removes it.`,
    preferredTools: ['read_file', 'run_benchmark'],
    temperature: 0.1,
  },
  Testing: {
    system: `${common} You write focused tests that fail before a fix and pass after it, and report exactly what they cover.`,
    preferredTools: ['read_file', 'write_file', 'run_tests'],
    temperature: 0.1,
  },
  Implementation: {
    system: `${common} You make the smallest correct change, keep the style of the code around it, and list the files you changed.`,
    preferredTools: ['read_file', 'write_file', 'run_tests'],
    temperature: 0.2,
  },
  Synthesis: {
    system: `${common} You consolidate the results of other workers into one coherent answer, and flag contradictions between them.`,
    preferredTools: [],
    temperature: 0.3,
  },
});

/**
 * The configuration of `role`: the built-in default with `overrides[role]`
 * laid over it (fields present in the override win; `preferredTools` is replaced, not merged).
 *
 * @example
 * ```ts
 * resolveRole('Testing', { Testing: { model: 'small-model' } }); // default system, overridden model
 * ```
 */
export function resolveRole(role: ChunkRole, overrides: RoleOverrides = {}): RoleConfig {
  const base = defaultRoles[role] ?? defaultRoles.Generic;
  const override = overrides[role] ?? {};
  const merged: RoleConfig = { ...base, preferredTools: [...base.preferredTools] };
  for (const [key, value] of Object.entries(override) as Array<[keyof RoleConfig, unknown]>) {
    if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = Array.isArray(value) ? [...value] : value;
  }
  return merged;
}
