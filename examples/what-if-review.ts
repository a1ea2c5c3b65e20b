/**
 * What-if replay: a recorded review run is replayed with one reviewer's
 * prompt changed. Every model call whose input is unchanged is answered
 * from the recording; only the changed reviewer and the lead, who reads its
 * notes, go to the model. The two runs are printed side by side.
 *
 *   npx tsx examples/what-if-review.ts
 *   TROUPE_ADAPTER=openai OPENAI_API_KEY=... npx tsx examples/what-if-review.ts
 */
import { advisors, agent, run } from 'troupe';
import { adapterFromEnv } from 'troupe/adapters/env';
import { memoryStore, readRun } from 'troupe/persistence';
import { scriptedAdapter } from 'troupe/testing';
import { formatWhatIf, whatIf } from 'troupe/travel';

const review = advisors(agent({ name: 'lead', system: 'Write the verdict on the change from the reviewers’ notes: approve, or request changes.' }), [
  agent({ name: 'security', system: 'Review the change for security problems.' }),
  agent({ name: 'style', system: 'Review the change for naming and style.' }),
]);

// Offline, a scripted model whose style reviewer is stricter when its prompt asks it to be.
const model =
  adapterFromEnv() ??
  scriptedAdapter({
    rules: [
      { agent: 'security', reply: { text: 'The query is parameterised: no injection risk.', usage: { inputTokens: 120, outputTokens: 12, costUsd: 0.0004 } } },
      { agent: 'style', reply: (r) => ({ text: r.spec.system?.includes('strict') ? 'Rename `x` to `retryCount`; `tmp` says nothing.' : 'Names are fine.', usage: { inputTokens: 110, outputTokens: 10, costUsd: 0.0003 } }) },
      { agent: 'lead', reply: (r) => ({ text: r.text.includes('Rename') ? 'Request changes: rename `x` and `tmp`.' : 'Approve.', usage: { inputTokens: 260, outputTokens: 8, costUsd: 0.0008 } }) },
    ],
  });

const store = memoryStore();
const change = 'PR 7: retry the upload up to three times (src/upload.ts)';

// 1. The recorded run.
await run(review, change, { adapter: model, store, runId: 'review-7' });

// 2. The same run with the style reviewer's prompt changed: only the calls the change affects reach the model.
let calls = 0;
const counted = { ...model, openSession: (spec: Parameters<typeof model.openSession>[0], options?: Parameters<typeof model.openSession>[1]) => {
  calls++;
  return model.openSession(spec, options);
} };
const report = await whatIf(review, await readRun('review-7', { store }), {
  adapter: counted,
  runId: 'review-7-strict',
  changes: [{ agent: 'style', prompt: 'Review the change for naming and style. Be strict: every unclear name is a finding.' }],
});
console.log(formatWhatIf(report));
console.log(`\nsessions opened on the model: ${calls} (${report.liveAgents.join(', ')}); answered from the recording: ${report.calls.filter((c) => c.source === 'recorded').map((c) => c.agent).join(', ')}`);
