/**
 * DAG analysis of a plan: stages for display, the critical path, the
 * remaining critical path of every chunk (the scheduler's priority), and a
 * Mermaid diagram. Pure functions, linear in chunks plus dependencies and
 * without recursion, so plans of any depth and width fit; a plan that is not
 * a valid graph gets a `ConfigurationError` (validate it first).
 * @module
 */
import { ConfigurationError } from '../../core/errors.js';
import { kahnOrder } from './graph.js';
import { validatePlan, type Plan, type PlanChunk } from './plan.js';

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
  const { deps, order } = validIndex(plan);
  const depth = new Int32Array(order.length);
  const stages: number[][] = [];
  for (const i of order) {
    let d = 0;
    for (const p of deps[i]!) if (depth[p]! + 1 > d) d = depth[p]! + 1;
    depth[i] = d;
    (stages[d] ??= []).push(plan.chunks[i]!.sequenceIndex);
  }
  return stages.map((s) => s.sort((a, b) => a - b));
}

/**
 * The critical path of a plan: its heaviest dependency chain (`weight`
 * defaults to {@link complexityWeight}). The one critical-path function of
 * troupe: the run report finds a run's critical path with it too
 * ({@link criticalPathOf}, by measured durations).
 */
export function criticalPath(plan: Plan, weight: ChunkWeight = complexityWeight): CriticalPath {
  const { deps, order } = validIndex(plan);
  const { path, length } = heaviestChain(deps, order, (i) => weight(plan.chunks[i]!));
  return { path: path.map((i) => plan.chunks[i]!.sequenceIndex), length };
}

/** A node of a graph for {@link criticalPathOf}: its id, the ids it depends on, and its weight. */
export interface WeightedNode {
  id: string;
  /** Ids of the nodes it depends on; ids of no node are left out. */
  dependsOn: readonly string[];
  weight: number;
}

/**
 * The heaviest chain of a graph of `nodes` (ids, first to last), by the
 * same rule as {@link criticalPath}: what the run report marks as a plan's
 * critical path, by the chunks' measured durations. Nodes in a cycle are
 * never on it.
 */
export function criticalPathOf(nodes: readonly WeightedNode[]): string[] {
  const position = new Map(nodes.map((n, i) => [n.id, i]));
  const deps = nodes.map((n) => n.dependsOn.flatMap((d) => (position.has(d) ? [position.get(d)!] : [])));
  const dependents: number[][] = nodes.map(() => []);
  deps.forEach((list, i) => {
    for (const d of list) dependents[d]!.push(i);
  });
  return heaviestChain(deps, kahnOrder(dependents), (i) => nodes[i]!.weight).path.map((i) => nodes[i]!.id);
}

/**
 * The heaviest chain of a graph by position: `deps` are the positions each
 * depends on and `order` a dependency order (positions left out of it are
 * never on the chain). Of equally heavy predecessors the first listed wins,
 * and of equally heavy ends the first in `order`. Linear in nodes plus
 * edges, without recursion.
 */
function heaviestChain(deps: ReadonlyArray<readonly number[]>, order: readonly number[], weightAt: (position: number) => number): { path: number[]; length: number } {
  const length = new Float64Array(deps.length);
  const prev = new Int32Array(deps.length).fill(-1);
  let end = -1;
  for (const i of order) {
    let best = 0;
    for (const p of deps[i]!) {
      if (prev[i] !== -1 && length[p]! <= best) continue;
      best = length[p]!;
      prev[i] = p;
    }
    length[i] = best + weightAt(i);
    if (end === -1 || length[i]! > length[end]!) end = i;
  }
  if (end === -1) return { path: [], length: 0 };
  const path: number[] = [];
  for (let i = end; i !== -1; i = prev[i]!) path.push(i);
  return { path: path.reverse(), length: length[end]! };
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
  const chunks = plan.chunks;
  const n = chunks.length;
  let ok = n > 0;
  // Indexes are usually contiguous (0..n-1 or 1..n): then a position is a subtraction.
  const first = n > 0 ? chunks[0]!.sequenceIndex : 0;
  let contiguous = Number.isInteger(first);
  for (let i = 0; i < n && contiguous; i++) if (chunks[i]!.sequenceIndex !== first + i) contiguous = false;
  let map: Map<number, number> | undefined;
  if (!contiguous) {
    map = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const index = chunks[i]!.sequenceIndex;
      if (map.has(index)) ok = false;
      map.set(index, i);
    }
  }
  const position = map ? (x: number) => map.get(x) : (x: number) => (Number.isInteger(x) && x >= first && x < first + n ? x - first : undefined);
  // Arrays of their final length (no growth), dependents counted first.
  const deps: number[][] = new Array<number[]>(n);
  const fanOut = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const own = chunks[i]!;
    const wanted = own.dependsOnIndexes;
    const list = new Array<number>(wanted.length);
    let k = 0;
    for (const dep of wanted) {
      const d = position(dep);
      if (d === undefined || dep === own.sequenceIndex) {
        ok = false;
        continue;
      }
      list[k++] = d;
      fanOut[d]!++;
    }
    if (k < list.length) list.length = k;
    deps[i] = list;
  }
  const dependents: number[][] = new Array<number[]>(n);
  for (let i = 0; i < n; i++) dependents[i] = new Array<number>(fanOut[i]!);
  fanOut.fill(0);
  for (let i = 0; i < n; i++) for (const d of deps[i]!) dependents[d]![fanOut[d]!++] = i;
  const order = kahnOrder(dependents, Int32Array.from(deps, (d) => d.length));
  if (order.length !== n) ok = false;
  return { position, deps, dependents, order, ok };
}

/**
 * For each chunk (by position in `plan.chunks`), the heaviest chain from it
 * to the end of the plan, itself included. The scheduler starts the ready
 * chunk with the highest value first. Linear in chunks plus edges.
 */
export function remainingCriticalPaths(plan: Plan, weight: ChunkWeight = complexityWeight, index: PlanIndex = indexPlan(plan)): Float64Array {
  if (index.order.length !== plan.chunks.length) throw new ConfigurationError('The plan has a dependency cycle: validate it first', { code: 'invalid_graph' });
  return remainingPaths(index, (i) => weight(plan.chunks[i]!), new Float64Array(plan.chunks.length));
}

/** {@link remainingCriticalPaths} by position, written into `into` (reused by the scheduler when its estimates change). */
export function remainingPaths(index: PlanIndex, weightAt: (position: number) => number, into: Float64Array): Float64Array {
  const { order, dependents } = index;
  for (let k = order.length - 1; k >= 0; k--) {
    const i = order[k]!;
    let max = 0;
    for (const d of dependents[i]!) if (into[d]! > max) max = into[d]!;
    into[i] = max + weightAt(i);
  }
  return into;
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

/** The plan's index, or a `ConfigurationError` naming what makes it invalid. */
function validIndex(plan: Plan): PlanIndex {
  const index = indexPlan(plan);
  if (index.ok || plan.chunks.length === 0) return index;
  const { errors } = validatePlan(plan);
  throw new ConfigurationError(`The plan is not a valid dependency graph (${errors.join('; ')}): validate it first`, { code: 'invalid_graph', details: { errors } });
}
