/**
 * LangGraph.js: one node per chunk in a `StateGraph`, an edge from `START`
 * to every chunk without dependencies, a join edge (`addEdge([deps], node)`)
 * into every other chunk, and `maxConcurrency` as the slot count. LangGraph
 * runs in supersteps: a node starts in the step after all its triggers.
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { Engine } from './types.js';

const State = Annotation.Root({ done: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) });

export const run: Engine = async (plan, slots, work) => {
  const graph = new StateGraph(State);
  const id = (i: number) => `c${i}`;
  const needed = new Set<number>();
  for (const c of plan.chunks) for (const d of c.dependsOnIndexes) needed.add(d);
  for (const c of plan.chunks) {
    const i = c.sequenceIndex;
    graph.addNode(id(i), async () => {
      await work(i);
      return { done: 1 };
    });
  }
  const edges = graph as unknown as { addEdge(from: string | string[], to: string): void };
  for (const c of plan.chunks) {
    const i = c.sequenceIndex;
    if (c.dependsOnIndexes.length === 0) edges.addEdge(START, id(i));
    else edges.addEdge(c.dependsOnIndexes.length === 1 ? id(c.dependsOnIndexes[0]!) : c.dependsOnIndexes.map(id), id(i));
    if (!needed.has(i)) edges.addEdge(id(i), END);
  }
  const app = graph.compile();
  const result = await app.invoke({}, { recursionLimit: plan.chunks.length + 10, maxConcurrency: slots });
  if (result.done !== plan.chunks.length) throw new Error(`LangGraph ran ${result.done} of ${plan.chunks.length} chunks`);
};
