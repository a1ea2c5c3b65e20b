/**
 * The scheduler's ready queue: a binary max-heap of chunk positions keyed by
 * priority (remaining critical path), ties broken by the lower position.
 * Push and pop are O(log n), so large plans never scan the queue; when the
 * priorities change, `rebuild` reorders it in linear time.
 * @module
 */

/** A max-heap of integer ids by a fixed priority table. */
export class ReadyQueue {
  readonly #heap: number[] = [];
  #priority: ArrayLike<number>;

  constructor(priority: ArrayLike<number>) {
    this.#priority = priority;
  }

  /** Number of ids waiting. */
  get size(): number {
    return this.#heap.length;
  }

  /** Add an id. */
  push(id: number): void {
    const heap = this.#heap;
    heap.push(id);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#before(id, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = id;
  }

  /** Remove and return the id of highest priority. */
  pop(): number | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last !== undefined) this.#siftDown(0, last);
    return top;
  }

  /** Restore the order after the priorities changed (linear in the ids waiting). */
  rebuild(): void {
    const heap = this.#heap;
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) this.#siftDown(i, heap[i]!);
  }

  /** Use a new priority table (the plan grew or changed) and hold exactly `ids`, reordered in linear time. */
  reset(priority: ArrayLike<number>, ids: readonly number[]): void {
    this.#priority = priority;
    this.#heap.length = 0;
    this.#heap.push(...ids);
    this.rebuild();
  }

  /** Remove every id and return them. */
  drain(): number[] {
    return this.#heap.splice(0);
  }

  /** Place `id` at `i` or below, moving higher-priority children up. */
  #siftDown(i: number, id: number): void {
    const heap = this.#heap;
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const child = r < n && this.#before(heap[r]!, heap[l]!) ? r : l;
      if (!this.#before(heap[child]!, id)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = id;
  }

  #before(a: number, b: number): boolean {
    const pa = this.#priority[a]!;
    const pb = this.#priority[b]!;
    return pa > pb || (pa === pb && a < b);
  }
}
