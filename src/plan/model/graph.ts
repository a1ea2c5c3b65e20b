/**
 * Graph algorithms over successor lists of integer nodes `0..n-1`, written
 * as loops with explicit stacks and queues: no recursion, so a chain of any
 * length fits the call stack. Linear in nodes plus edges.
 * @module
 */

/** Successor lists: `successors[v]` are the nodes `v` has an edge to. */
export type Successors = ReadonlyArray<readonly number[]>;

/**
 * The nodes in dependency order (Kahn's algorithm); shorter than
 * `successors` when there is a cycle. `inDegree` (each node's number of
 * incoming edges, counted here when left out) is used up.
 */
export function kahnOrder(successors: Successors, inDegree?: Int32Array): number[] {
  const n = successors.length;
  let pending = inDegree;
  if (!pending) {
    pending = new Int32Array(n);
    for (let v = 0; v < n; v++) for (const w of successors[v]!) pending[w]!++;
  }
  const order: number[] = [];
  for (let v = 0; v < n; v++) if (pending[v] === 0) order.push(v);
  for (let k = 0; k < order.length; k++) {
    for (const w of successors[order[k]!]!) if (--pending[w]! === 0) order.push(w);
  }
  return order;
}

/**
 * The strongly connected components that hold a cycle (two nodes or more, or
 * one with an edge to itself), by Tarjan's algorithm with an explicit stack.
 */
export function cyclicComponents(successors: Successors): number[][] {
  const n = successors.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const path: number[] = [];
  const nextEdge: number[] = [];
  const found: number[][] = [];
  let counter = 0;
  const open = (v: number): void => {
    index[v] = low[v] = counter++;
    stack.push(v);
    onStack[v] = 1;
    path.push(v);
    nextEdge.push(0);
  };
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    open(root);
    while (path.length > 0) {
      const top = path.length - 1;
      const v = path[top]!;
      const edges = successors[v]!;
      const e = nextEdge[top]!;
      if (e < edges.length) {
        nextEdge[top] = e + 1;
        const w = edges[e]!;
        if (index[w] === -1) open(w);
        else if (onStack[w] === 1 && index[w]! < low[v]!) low[v] = index[w]!;
        continue;
      }
      path.pop();
      nextEdge.pop();
      if (path.length > 0) {
        const parent = path[path.length - 1]!;
        if (low[v]! < low[parent]!) low[parent] = low[v]!;
      }
      if (low[v] !== index[v]) continue;
      const component: number[] = [];
      let w: number;
      do {
        w = stack.pop()!;
        onStack[w] = 0;
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || edges.includes(v)) found.push(component);
    }
  }
  return found;
}

/**
 * A shortest cycle through `start` that stays inside `component` (breadth
 * first, successors taken in the order `rank` gives them), as a closed path
 * `[start, ..., start]`.
 */
export function cycleThrough(successors: Successors, component: readonly number[], start: number, rank: (v: number) => number): number[] {
  const inside = new Set(component);
  const parent = new Map<number, number>();
  const queue = [start];
  for (let k = 0; k < queue.length; k++) {
    const v = queue[k]!;
    const next = successors[v]!.filter((w) => inside.has(w)).sort((a, b) => rank(a) - rank(b));
    for (const w of next) {
      if (w === start) {
        const path = [start];
        for (let p: number | undefined = v; p !== undefined && p !== start; p = parent.get(p)) path.push(p);
        path.push(start);
        // Built backwards from the closing edge: [start, v, ..., first] + start; reverse the middle.
        return [start, ...path.slice(1, -1).reverse(), start];
      }
      if (!parent.has(w) && w !== start) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return [...component, start];
}
