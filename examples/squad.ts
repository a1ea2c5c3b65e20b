/**
 * Squad team folders: discover the team a repository defines in `.squad/`
 * (or the legacy `.ai-team/`), print it as a table, merge it with the
 * built-in presets, and run it offline with `fromPreset` on the scripted
 * adapter: the orchestrator plans with the team's routing notes, the workers
 * get their charters and the decision log, and the loop meets its goal in
 * the second iteration.
 *
 *   npx tsx examples/squad.ts [repository-root]
 */
import { fileURLToPath } from 'node:url';
import { formatOpTree, run } from 'troupe';
import { builtInPresets, discoverSquad, fromPreset, mergePresets } from 'troupe/squad';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const root = process.argv[2] ?? fileURLToPath(new URL('../test/fixtures/squad/Azure-Samples__eShopLite', import.meta.url));

const team = await discoverSquad(root);
if (!team) {
  console.log(`No squad team in ${root}`);
  process.exit(0);
}

console.log(`${team.name} (${team.mode}), read from ${team.sourcePath}\n`);
console.table(
  team.roster.map((member) => ({
    name: member.name,
    role: member.role,
    status: member.status ?? '',
    worker: member.infrastructure ? 'no (infrastructure)' : 'yes',
    prompt: member.infrastructure ? '' : `${team.workers.find((w) => w.name === member.name)?.systemPrompt.length ?? 0} chars`,
  })),
);
console.log(`routing context: ${team.routingContext?.length ?? 0} chars, shared context: ${team.sharedContext?.length ?? 0} chars`);
for (const warning of team.warnings) console.log(`warning: ${warning}`);

// The repository's team joins the presets; a repository preset wins over a built-in of the same name.
const presets = mergePresets(builtInPresets(), [], [team]);
console.log(`\npresets: ${presets.map((p) => `${p.name} [${p.source}]`).join(', ')}`);

// Run the team offline. The scripted orchestrator gives the first two workers
// a task, finds the result incomplete, then gives the tester (or the last
// worker) a check and declares the goal met; every worker answers with what
// it was asked.
const [first, second] = team.workers;
const last = team.workers.find((w) => /test/i.test(w.role ?? '')) ?? team.workers.at(-1)!;
let synthesis = 0;
const live = adapterFromEnv(); // a real model when the environment names one (TROUPE_ADAPTER, see troupe/adapters/env)
const adapter = live ?? scriptedAdapter({
  rules: [
    {
      agent: 'orchestrator',
      match: /## WORKER RESULTS/,
      reply: () =>
        ++synthesis === 1
          ? `The search box and its API are in place; nobody has tested them yet.\n[[NEEDS_ITERATION]]`
          : `Search is done: a search box on the catalogue page, a search endpoint, and tests for both.\n[[GROUP_REFLECT_COMPLETE]]`,
    },
    {
      agent: 'orchestrator',
      match: /## AVAILABLE WORKERS/,
      reply: `@worker:${first?.name}\nPlan the search feature and its API.\n@end\n@worker:${second?.name ?? first?.name}\nBuild the search box.\n@end`,
    },
    { agent: 'orchestrator', reply: `@worker:${last.name}\nTest the search box and the API.\n@end` },
  ],
  fallback: (request) => `${request.agent}: ${/## YOUR ASSIGNED TASK\n(.*)/.exec(request.text)?.[1] ?? 'done'} Done.`,
});

const result = await run(fromPreset(team), 'Add product search to the catalogue', { adapter });
console.log(`\n${result.summary}`);
console.log(result.output);
console.log(`\n${formatOpTree(result.trace)}`);
if (!live && (!result.goalMet || (team.mode === 'orchestrator-reflect' && result.iterations !== 2))) process.exit(1);
