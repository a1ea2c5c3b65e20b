/**
 * A `.claude/agents` folder, loaded and run as a team: the lead calls the
 * code reviewer and the test writer as tools (its `Task(...)` entry), each
 * nested in the lead's op. Claude Code's tool names resolve to the tools
 * this app registered (`Read` → `read_file`); its model aliases go through
 * a model map. Runs offline on the scripted adapter.
 *
 * The environment can name a real model instead (see docs/adapters.md):
 *
 *   TROUPE_ADAPTER=openai OPENAI_BASE_URL=http://localhost:11434/v1 TROUPE_MODEL=llama3.2 npx tsx examples/claude-agents.ts
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { defineTool, formatOpTree, run } from 'troupe';
import { compileAgents, inspectAgents, loadAgentFolder, writeAgentFile, type AgentResolutionOptions } from 'troupe/agents';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const here = import.meta.dirname;
const { agents } = await loadAgentFolder(join(here, 'claude-agents', '.claude', 'agents'));

// The one tool this app offers: reading a file of the examples folder.
const readFileTool = defineTool({
  name: 'read_file',
  description: 'Read a text file of the project',
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => {
    const full = resolve(here, path);
    if (!full.startsWith(here)) return 'Error: outside the project';
    return (await readFile(full, 'utf8')).slice(0, 2000);
  },
});
const options: AgentResolutionOptions = {
  tools: { read_file: readFileTool },
  toolAliases: { Read: 'read_file' },
  modelMap: { sonnet: 'claude-sonnet-4-5', haiku: 'claude-haiku-4-5' },
  // Grep, Glob, Write and Bash are Claude Code's own tools; without its CLI they are left out (with a warning).
  unknownTools: 'warn',
};

console.log('What troupe read:');
for (const row of inspectAgents(agents, options)) {
  const tools = `${row.tools.resolved.join(', ') || 'none'} resolved; ${row.tools.unresolved.join(', ') || 'none'} not`;
  console.log(`  ${row.name.padEnd(14)} ${row.format}  model ${row.models[0] ?? '-'}  tools: ${tools}  sub-agents: ${row.subAgents.join(', ') || '-'}`);
  for (const w of row.warnings) console.log(`    warning: ${w.message}`);
}

const flows = compileAgents(agents, options);
const adapter =
  adapterFromEnv() ??
  scriptedAdapter({
    replies: {
      lead: [
        { toolCalls: [{ name: 'read_file', arguments: { path: 'quickstart.ts' } }] },
        {
          toolCalls: [
            { name: 'code-reviewer', arguments: { task: 'Review adding a --dry-run flag to the quickstart: what could break?' } },
            { name: 'test-writer', arguments: { task: 'Which tests does a --dry-run flag on the quickstart need?' } },
          ],
        },
        'Plan: add --dry-run, which prints the run instead of calling the model.\nWatch: the flag must not reach the adapter.\nTests: dry run prints, dry run makes no model call.',
      ],
      'code-reviewer': ['Risk 1 (high): the flag must stop before run(); risk 2 (low): help text.'],
      'test-writer': ['Test "dry run prints the plan"; test "dry run makes no model call".'],
    },
  });

const result = await run(flows.lead!, 'Add a --dry-run flag to the quickstart example', { adapter });
console.log(`\n${result.output}\n`);
console.log(`answered by ${result.agent}; ${result.usage.turns} turns in all, the sub-agents' included`);
console.log(formatOpTree(result.trace));

// The same agent, written for GitHub Copilot.
console.log(`\nAs a Copilot agent file (${writeAgentFile(agents.find((a) => a.name === 'lead')!, 'copilot').fileName}):`);
console.log(writeAgentFile(agents.find((a) => a.name === 'lead')!, 'copilot').text.split('\n---')[0]);
