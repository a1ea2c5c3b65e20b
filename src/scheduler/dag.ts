/**
 * DAG analysis of a plan: stages for display, the critical path, the
 * remaining critical path of every chunk (the scheduler's priority), and a
 * Mermaid diagram. Pure functions; validate the plan first.
 * @module
 */
import { Graph, alg } from '@dagrejs/graphlib';
import { ConfigurationError } from '../core/errors.js';
import type { Plan, PlanChunk } from './plan.js';

/** The weight of a chunk (an estimate of its duration). */
export type ChunkWeight = (chunk: PlanChunk) => number;

/** The default weight: Low 1, Medium 2, High 3. */
export const complexityWeight: ChunkWeight = (chunk) => (chunk.complexity === 'High' ? 3 : chunk.complexity === 'Medium' ? 2 : 1);

/** The critical path of a plan. */
export interface CriticalPath {
  /** The `sequenceIndex` of each chunk on the path, first to last. */
  path: number[];
  /** The sum of the path's weights. */
  length: number;
}

/**
 * Group the chunks by dependency depth, for display: chunks with no
 * dependencies first, then chunks whose deepest dependency is in stage 1...
 * The scheduler does not run stage by stage.
 *
 * @example
 * ```ts
 * buildStages(plan); // A and B independent, C after both → [[A, B], [C]]
 * ```
 */
export function buildStages(plan: Plan): number[][] {
  const order = topologicalOrder(plan);
  const byIndex = indexChunks(plan);
  const depth = new Map<number, number>();
  const stages: number[][] = [];
  for (const index of order) {
    const chunk = byIndex.get(index)!;
    let d = 0;
    for (const dep of chunk.dependsOnIndexes) d = Math.max(d, (depth.get(dep) ?? 0) + 1);
    depth.set(index, d);
    (stages[d] ??= []).push(index);
  }
  return stages.map((s) => s.sort((a, b) => a - b));
}

/** The heaviest dependency chain of a plan (`weight` defaults to {@link complexityWeight}). */
export function criticalPath(plan: Plan, weight: ChunkWeight = complexityWeight): CriticalPath {
  const order = topologicalOrder(plan);
  const byIndex = indexChunks(plan);
  const best = new Map<number, { length: number; prev?: number }>();
  let end: number | undefined;
  let endLength = -Infinity;
  for (const index of order) {
    const chunk = byIndex.get(index)!;
    let length = 0;
    let prev: number | undefined;
    for (const dep of chunk.dependsOnIndexes) {
      const l = best.get(dep)!.length;
      if (l > length) [length, prev] = [l, dep];
    }
    length += weight(chunk);
    best.set(index, prev === undefined ? { length } : { length, prev });
    if (length > endLength) [endLength, end] = [length, index];
  }
  const path: number[] = [];
  for (let i = end; i !== undefined; i = best.get(i)!.prev) path.unshift(i);
  return { path, length: path.length === 0 ? 0 : endLength };
}

/** A plan's chunks by position, with their edges and a dependency order. */
export interface PlanIndex {
  /** Position in `plan.chunks` of a `sequenceIndex` (undefined when unknown). */
  position: (sequenceIndex: number) => number | undefined;
  /** Positions each chunk depends on. */
  deps: number[][];
  /** Positions that depend on each chunk. */
  dependents: number[][];
  /** Positions in dependency order (Kahn); shorter than the plan when it has a cycle. */
  order: number[];
  /** False when an index is duplicated or unknown, a chunk depends on itself, or there is a cycle. */
  ok: boolean;
}

/** Index a plan in one linear pass (the scheduler's fast path; {@link validatePlan} explains problems). */
export function indexPlan(plan: Plan): PlanIndex {
  const n = plan.chunks.length;
  let ok = n > 0;
  // Indexes are usually contiguous (0..n-1 or 1..n): then a position is a subtraction.
  const first = n > 0 ? plan.chunks[0]!.sequenceIndex : 0;
  let contiguous = Number.isInteger(first);
  for (let i = 0; i < n && contiguous; i++) if (plan.chunks[i]!.sequenceIndex !== first + i) contiguous = false;
  let position: (sequenceIndex: number) => number | undefined;
  if (contiguous) {
    position = (x) => (Number.isInteger(x) && x >= first && x < first + n ? x - first : undefined);
  } else {
    const map = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const index = plan.chunks[i]!.sequenceIndex;
      if (map.has(index)) ok = false;
      map.set(index, i);
    }
    position = (x) => map.get(x);
  }
  const deps: number[][] = new Array<number[]>(n);
  const dependents: number[][] = new Array<number[]>(n);
  for (let i = 0; i < n; i++) dependents[i] = [];
  const pending = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const own = plan.chunks[i]!;
    const list: number[] = [];
    for (const dep of own.dependsOnIndexes) {
      const d = position(dep);
      if (d === undefined || dep === own.sequenceIndex) {
        ok = false;
        continue;
      }
      list.push(d);
      dependents[d]!.push(i);
      pending[i]!++;
    }
    deps[i] = list;
  }
  const order: number[] = [];
  for (let i = 0; i < n; i++) if (pending[i] === 0) order.push(i);
  for (let k = 0; k < order.length; k++) {
    for (const d of dependents[order[k]!]!) if (--pending[d]! === 0) order.push(d);
  }
  if (order.length !== n) ok = false;
  return { position, deps, dependents, order, ok };
}

/**
 * For each chunk (by position in `plan.chunks`), the heaviest chain from it
 * to the end of the plan, itself included. The scheduler starts the ready
 * chunk with the highest value first. Linear in chunks plus edges.
 */
export function remainingCriticalPaths(plan: Plan, weight: ChunkWeight = complexityWeight, index: PlanIndex = indexPlan(plan)): Float64Array {
  const n = plan.chunks.length;
  if (index.order.length !== n) throw new ConfigurationError('The plan has a dependency cycle: validate it first', { code: 'invalid_graph' });
  const rest = new Float64Array(n);
  for (let k = n - 1; k >= 0; k--) {
    const i = index.order[k]!;
    let max = 0;
    for (const d of index.dependents[i]!) if (rest[d]! > max) max = rest[d]!;
    rest[i] = max + weight(plan.chunks[i]!);
  }
  return rest;
}

/**
 * The plan as a Mermaid flowchart: one node per chunk (index, title, role),
 * one arrow per dependency.
 *
 * @example
 * ```ts
 * console.log('```mermaid\n' + toMermaid(plan) + '\n```');
 * ```
 */
export function toMermaid(plan: Plan): string {
  const lines = ['flowchart TD'];
  for (const chunk of plan.chunks) {
    const label = `${chunk.sequenceIndex}. ${chunk.title} (${chunk.role})`.replace(/["<>]/g, "'");
    lines.push(`  c${chunk.sequenceIndex}["${label}"]`);
  }
  for (const chunk of plan.chunks) {
    for (const dep of chunk.dependsOnIndexes) lines.push(`  c${dep} --> c${chunk.sequenceIndex}`);
  }
  return lines.join('\n');
}

function indexChunks(plan: Plan): Map<number, PlanChunk> {
  return new Map(plan.chunks.map((c) => [c.sequenceIndex, c]));
}

/** The chunks' indexes in dependency order (graphlib's topsort); throws on a cycle. */
function topologicalOrder(plan: Plan): number[] {
  const graph = new Graph();
  for (const chunk of plan.chunks) graph.setNode(String(chunk.sequenceIndex));
  for (const chunk of plan.chunks) for (const dep of chunk.dependsOnIndexes) graph.setEdge(String(dep), String(chunk.sequenceIndex));
  try {
    return alg.topsort(graph).map(Number);
  } catch (error) {
    throw new ConfigurationError('The plan has a dependency cycle: validate it first', { code: 'invalid_graph', cause: error });
  }
}
