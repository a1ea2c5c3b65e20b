/**
 * Debug memory leaks in two modules in parallel, then consolidate: a planner
 * decomposes the task into a DAG, two MemoryDiagnostics workers run side by
 * side, a Synthesis chunk consolidates, and an aggregator reports. Each chunk
 * carries the planner's estimate of its duration (`estimatedMs`), which the
 * scheduler uses to start the longest chains first. Offline on the scripted
 * adapter.
 *
 *   npx tsx examples/memory-leaks.ts
 */
import { PlanningSession, buildStages, criticalPath, toMermaid, type Plan } from 'troupe/plan';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const plan: Plan = {
  planSummary: 'Find the leaks in the cache and session modules in parallel, then consolidate one fix list.',
  chunks: [
    {
      sequenceIndex: 0,
      title: 'Diagnose src/cache',
      prompt: 'Find what keeps memory alive in src/cache (listeners, timers, unbounded maps). Report evidence and a fix.',
      dependsOnIndexes: [],
      workingScope: ['src/cache/**'],
      complexity: 'Medium',
      role: 'MemoryDiagnostics',
      estimatedMs: 240_000,
    },
    {
      sequenceIndex: 1,
      title: 'Diagnose src/session',
      prompt: 'Find what keeps memory alive in src/session (listeners, timers, unbounded maps). Report evidence and a fix.',
      dependsOnIndexes: [],
      workingScope: ['src/session/**'],
      complexity: 'Medium',
      role: 'MemoryDiagnostics',
      estimatedMs: 180_000,
    },
    {
      sequenceIndex: 2,
      title: 'Consolidate the fixes',
      prompt: 'Merge the two diagnoses into one ordered fix list; say which fix frees the most memory.',
      dependsOnIndexes: [0, 1],
      complexity: 'Low',
      role: 'Synthesis',
      estimatedMs: 60_000,
    },
  ],
};

// A real model when the environment names one (TROUPE_ADAPTER, see troupe/adapters/env); else the scripted
// adapter stands in for the models: the planner, two diagnosticians, the synthesis.
const adapter = adapterFromEnv() ?? scriptedAdapter({
  replies: { planner: ['{"action":"plan"}', `Here is the plan:\n\`\`\`json\n${JSON.stringify(plan)}\n\`\`\``] },
  rules: [
    { agent: 'MemoryDiagnostics', match: 'src/cache', reply: 'src/cache/lru.ts: `onEvict` listeners are added per get() and never removed (42 MB after 1 h). Fix: register once in the constructor.' },
    { agent: 'MemoryDiagnostics', match: 'src/session', reply: 'src/session/store.ts: expired sessions stay in `byId` because the sweep timer is cleared on reload. Fix: restart the sweep in `reload()`.' },
    {
      agent: 'Synthesis',
      reply: (r) =>
        `Fix list: 1) register onEvict once (${r.text.includes('42 MB') ? 'largest, 42 MB/h' : 'size unknown'}); 2) restart the session sweep after reload.`,
    },
    { agent: 'synthesis', reply: 'Both leaks are found and neither worker contradicts the other: the cache leaks listeners (the larger leak), the session store keeps expired sessions. Apply the cache fix first.' },
  ],
});

const session = new PlanningSession({ adapter, maxParallel: 2 });
session.emitter.on('phase.changed', (e) => console.log(`phase: ${e.from} -> ${e.to}`));
session.emitter.on('chunk.status', (e) => {
  if (e.status === 'running' || e.status === 'completed') console.log(`  chunk ${e.chunkId} (${e.role}) ${e.status}`);
});

const planned = await session.submitTask('Our service leaks memory; debug the cache and session modules.');
console.log('\n```mermaid\n' + toMermaid(planned.plan!) + '\n```');
console.log('stages:', JSON.stringify(buildStages(planned.plan!)));
const estimated = criticalPath(planned.plan!, (c) => c.estimatedMs ?? 0);
console.log(`critical path by estimate: ${estimated.path.join(' -> ')} (${estimated.length / 60_000} min)`);

const done = await session.approvePlan();
console.log('\nSynthesis chunk:', done.outcome!.results[2]!.output);
console.log('\nReport:', done.outcome!.output);
console.log('Stats:', JSON.stringify({ ...done.outcome!.stats, usage: undefined }));
