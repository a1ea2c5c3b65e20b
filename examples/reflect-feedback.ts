/**
 * An orchestrator-reflect loop that learns from each iteration: workers
 * with spaces in their names (`@worker:Code Reviewer`), a worker that fails
 * in the first iteration, the adjustments that failure calls for (events,
 * and a section of the next plan), an evaluator that sees the iteration and
 * the previous score, and a lead that ends its answer with
 * `All done. [[GROUP_REFLECT_COMPLETE]]`. The group and its orchestration
 * mode are kept in the team registry. Offline on the scripted adapter; the
 * environment can name a real model instead:
 *
 *   npx tsx examples/reflect-feedback.ts
 *   TROUPE_ADAPTER=openai OPENAI_BASE_URL=http://localhost:11434/v1 TROUPE_MODEL=llama3.2 npx tsx examples/reflect-feedback.ts
 */
import { agent, orchestrate, run } from 'troupe';
import { memoryStore, teamRegistry, type TeamRegistryState } from 'troupe/persistence';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const REQUEST = 'Fix the token refresh bug in src/auth/session.ts, with regression tests.';

// The model named by the environment (TROUPE_ADAPTER), else a scripted one.
let testRuns = 0;
const adapter =
  adapterFromEnv() ??
  scriptedAdapter({
    rules: [
      {
        agent: 'lead',
        reply: (r) => {
          if (r.text.includes('## WORKER RESULTS')) {
            return r.text.includes('Test Writer (failed)')
              ? 'The fix is ready; the tests are missing.\n[[NEEDS_ITERATION]]'
              : 'The refresh path checks expiresAt before reusing a token, and two regression tests cover it. All done. [[GROUP_REFLECT_COMPLETE]]';
          }
          return r.text.includes('## ADJUSTMENTS')
            ? '@worker:Test Writer\nWrite the two regression tests again, one test per case.\n@end'
            : '@Worker:Code Reviewer\nFind and fix the expiry bug in the refresh path.\n@End\n@worker:Test Writer\nWrite regression tests for an expired and a revoked token.\n@END';
        },
      },
      { agent: 'Code Reviewer', reply: 'Fixed: the refresh path reused a token without checking expiresAt; it now compares it with the clock first and refuses a revoked token.' },
      {
        agent: 'Test Writer',
        reply: () => (++testRuns === 1 ? { fault: 'throw', error: 'the test runner crashed' } : 'Added tests: refresh fails for an expired token, and for a revoked one; both pass with the fix in place.'),
      },
      { agent: 'judge', reply: (r) => (r.text.includes('## ITERATION 1/') ? 'SCORE: 0.5\nRATIONALE: The fix is there, the tests are not.' : 'SCORE: 0.95\nRATIONALE: Fixed and tested. [[GROUP_REFLECT_COMPLETE]]') },
    ],
  });

// The group as the application keeps it between restarts.
const registry = teamRegistry(memoryStore());
const state: TeamRegistryState = {
  schemaVersion: 3,
  groups: [{ id: 'auth', name: 'Auth fixes', mode: 'multi', orchestration: 'orchestrator-reflect', sortOrder: 0 }],
  members: [
    { name: 'lead', groupId: 'auth', role: 'orchestrator' },
    { name: 'Code Reviewer', groupId: 'auth', role: 'worker' },
    { name: 'Test Writer', groupId: 'auth', role: 'worker' },
  ],
};
await registry.save(state);
const { state: loaded } = await registry.load();
const group = loaded.groups[0]!;

const loop = orchestrate({
  name: group.name,
  mode: group.orchestration ?? 'orchestrator-reflect',
  lead: agent({ name: 'lead', system: 'You lead a small team fixing bugs.' }),
  workers: loaded.members.filter((m) => m.role === 'worker').map((m) => agent({ name: m.name })),
  evaluator: agent({ name: 'judge', system: 'You score bug fixes.' }),
  maxIterations: 4,
});

const result = await run(loop, REQUEST, {
  adapter,
  onEvent(e) {
    if (e.type === 'reflect.adjustment') console.log(`adjustment after iteration ${e.iteration} (${e.kind}): ${e.message}`);
  },
});
console.log(`${group.name} (${group.orchestration}): ${result.summary}`);
for (const e of result.evaluations) console.log(`iteration ${e.iteration}: score ${e.score} - ${e.rationale}`);
console.log(`\n${result.output}`);
