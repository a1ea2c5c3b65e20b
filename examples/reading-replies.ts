/**
 * Reading model replies as they really come: Windows line ends, fences of
 * any length, a placeholder in braces before the JSON, damaged JSON. Offline
 * the scripted adapter plays a messy reply; the environment can name a real
 * model instead:
 *
 *   npx tsx examples/reading-replies.ts
 *   TROUPE_ADAPTER=openai OPENAI_BASE_URL=http://localhost:11434/v1 TROUPE_MODEL=llama3.2 npx tsx examples/reading-replies.ts
 */
import { z } from 'zod';
import { agent, run } from 'troupe';
import { parseLeadActions } from 'troupe/coordination';
import { parseSentinels } from 'troupe/reflection';
import { safeFindJson } from 'troupe/text';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

// A reply as models write them: CRLF line ends, an example in a fence, a
// placeholder in braces, then the list with a trailing comma.
const messy = [
  'Use {name} as the placeholder for each step. For example:',
  '````markdown',
  '```json',
  '[{"step": "an example, not the answer"}]',
  '```',
  '[[REFLECTION_COMPLETE]]',
  '````',
  'Here are the steps:',
  '[{"step": "read the logs"}, {"step": "find the leak"}, {"step": "fix it"},]',
].join('\r\n');

const adapter = adapterFromEnv() ?? scriptedAdapter({ replies: { planner: [messy] } });
const planner = agent({ name: 'planner', system: 'Answer with a JSON array of {"step": "..."} objects.' });

const { output } = await run(planner, 'How do we find a memory leak? Three steps.', { adapter });

// The first JSON candidate that passes the schema: fences first, then the text; damage repaired.
const steps = z.array(z.object({ step: z.string() })).min(1);
const found = safeFindJson(output, { kind: 'array', schema: steps });
if (found.success) {
  console.log(`steps (${found.data.source}${found.data.repaired ? ', repaired' : ''}):`);
  for (const { step } of found.data.data) console.log(`- ${step}`);
} else {
  console.log(`no steps: ${found.issues.map((i) => i.message).join('; ')}`);
}

// What is inside a fence is quoted: the sentinel in the example does not end a loop.
console.log(`reflection complete: ${parseSentinels(output).reflectionComplete}`);

// And a lead that shows the action format in a fence does not act on it.
const lead = 'The format is:\n```\nCANCEL t1: obsolete\n```\nAPPROVE t2';
console.log(`lead actions: ${JSON.stringify(parseLeadActions(lead).actions)}`);
