/**
 * Squad team folders: discover the team a repository defines in `.squad/`
 * (or the legacy `.ai-team/`), print it as a table, and merge it with the
 * built-in presets.
 *
 *   npx tsx examples/squad.ts [repository-root]
 */
import { fileURLToPath } from 'node:url';
import { builtInPresets, discoverSquad, mergePresets } from 'troupe';

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
