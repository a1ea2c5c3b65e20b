/**
 * Two troupe processes working together over A2A: this one plans a
 * release; the other (`examples/a2a/reviewers.ts`, started here) serves its
 * review panel as an A2A agent, and that remote panel is an advisor of the
 * planner. The planner's op tree holds the panel's own ops, mirrored from
 * the other process's status updates; the panel's usage counts here.
 * Runs offline on the scripted adapter.
 *
 *   npx tsx examples/a2a-collaboration.ts
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { advisors, agent, formatOpTree, run } from 'troupe';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';
import { a2aAgent } from 'troupe/a2a';

// The other process: the review panel, behind a token only the two processes know.
const token = randomBytes(16).toString('hex');
const reviewersProcess = spawn(process.execPath, [...process.execArgv, join(import.meta.dirname, 'a2a', 'reviewers.ts')], {
  env: { ...process.env, A2A_TOKEN: token },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise<string>((resolve, reject) => {
  let out = '';
  reviewersProcess.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    const found = /^listening (\S+)/m.exec(out);
    if (found) resolve(found[1]!);
  });
  reviewersProcess.once('exit', (code) => reject(new Error(`the reviewers' process exited with ${code}`)));
});

try {
  // The remote panel, as a runnable: its card is read and checked first (it must list the skill asked for).
  const panel = a2aAgent(url, { name: 'review-panel', skill: 'review-panel', headers: { authorization: `Bearer ${token}` } });
  const card = await panel.card();
  console.log(`remote agent: ${card.name} (${card.description}), skills: ${card.skills.map((s) => s.id).join(', ')}, over ${card.binding} ${card.protocolVersion}`);

  const adapter = adapterFromEnv() ?? scriptedAdapter({
    replies: { planner: ['Release plan for 2.0:\n1. Fix the changelog wording.\n2. Ship 2.0 with `legacy_tokens` kept.\n3. Drop `legacy_tokens` in 2.1.'] },
  });
  const planner = agent({ name: 'planner', system: 'You plan releases. Take the review panel\'s findings into account.' });
  const result = await run(advisors(planner, [panel]), 'Plan the 2.0 release: drop the legacy token table and publish the changelog.', {
    adapter,
    onEvent: (event) => {
      if (event.type === 'a2a.status' && event.state !== 'working') console.log(`  review-panel task ${event.state}`);
      if (event.type === 'agent.completed' && event.agent !== 'planner') console.log(`  (remote) ${event.agent}: ${event.output}`);
    },
  });
  console.log(`\n${result.output}\n`);
  console.log(formatOpTree(result.trace));
} finally {
  reviewersProcess.kill('SIGTERM');
  await new Promise((resolve) => (reviewersProcess.exitCode === null ? reviewersProcess.once('exit', resolve) : resolve(undefined)));
}
