/**
 * A code review panel: an analyst, a developer and a security reviewer
 * discuss a change over a shared channel; the lead reviews each round,
 * concludes when the panel is done, and writes the verdict. Runs offline on
 * the scripted adapter.
 *
 *   npx tsx examples/review-panel.ts
 */
import { agent, run, team, type TroupeEvent } from 'troupe';
import { memoryStore } from 'troupe/persistence';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const change = 'PR 42: add `GET /export?file=<name>` that streams a CSV report from ./reports.';

const vote = (reason: string) => ({ toolCalls: [{ name: 'vote_conclude', arguments: { reason } }] });

// A real model when the environment names one (TROUPE_ADAPTER, see troupe/adapters/env); else the scripted
// adapter stands in for a model: each agent's replies, in order.
export const adapter = adapterFromEnv() ?? scriptedAdapter({
  replies: {
    analyst: [
      'The feature matches the ticket: finance needs the monthly CSV. Missing: a test for an unknown file name.',
      vote('requirements covered once the path check lands'),
      'Agreed with the fix; the ticket is covered.',
    ],
    developer: [
      'Implementation streams the file with fs.createReadStream; response headers are right.',
      vote('fix is small and tested'),
      'I will resolve the name with path.basename and add a 404 test.',
    ],
    security: [
      'Blocking: `file` is joined to ./reports unchecked, so `../../etc/passwd` escapes the folder (path traversal).',
      vote('traversal fixed by basename + allow-list'),
      'With basename and a .csv allow-list the traversal is closed.',
    ],
    lead: [
      'Developer: fix the traversal the security reviewer found, then everyone confirm.',
      { toolCalls: [{ name: 'conclude_team', arguments: { summary: 'Approve after the path traversal fix' } }] },
      'Panel agrees; concluding.',
      'Verdict: request changes. Resolve `file` with path.basename, allow only .csv under ./reports, ' +
        'and add tests for an unknown name (404) and a traversal attempt (400). Approve once these land.',
    ],
  },
});

const panel = team({
  name: 'review-panel',
  members: [
    agent({ name: 'analyst', system: 'You check changes against the requirements.' }),
    agent({ name: 'developer', system: 'You review the implementation and propose fixes.' }),
    agent({ name: 'security', system: 'You look for vulnerabilities.' }),
  ],
  lead: agent({ name: 'lead', system: 'You lead the review and write the verdict.' }),
  terminationMode: 'lead-decides',
  maxRounds: 4,
  onVote: (v) => console.log(`  vote: ${v.member} ${v.vote ? 'votes to conclude' : 'withdraws'} (round ${v.round})`),
});

// With a store, the team's state is saved after every round (`resume(panel, runId, { store })` would continue it).
const onEvent = (e: TroupeEvent) => {
  if (e.type === 'checkpoint.saved' && !e.finished) console.log(`  checkpoint of ${e.kind} "${e.name}" saved`);
};
const result = await run(panel, change, { adapter, store: memoryStore(), onEvent });
console.log('\nTranscript:');
for (const m of result.transcript) console.log(`  [${m.from}, round ${m.round}${m.vote ? ', votes' : ''}] ${m.text}`);
console.log(`\nStatus: ${result.status}${result.reason ? ` (${result.reason})` : ''} after ${result.rounds} rounds (${result.summary ?? 'no summary'})`);
console.log(`${result.agent}: ${result.output}`);
