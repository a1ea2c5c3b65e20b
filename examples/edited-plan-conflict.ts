/**
 * An edited plan approved, and a merge conflict escalated and resolved. A
 * planner proposes two chunks; the user edits the plan (a clearer title, a
 * narrower prompt) and approves it. Both workers change the same line of
 * `config.txt`, each in its own git worktree: the second merge conflicts,
 * the planning session hears of it (a `chunk.conflict` event and a line in
 * its conversation), the worker's retry is told which path conflicted and
 * what the other chunk changed, reconciles both changes, and the
 * aggregator reports the conflict as resolved. Offline on the scripted
 * adapter, in a throw-away repository that it removes afterwards.
 *
 *   npx tsx examples/edited-plan-conflict.ts
 *
 * The environment can name a real model instead (see docs/adapters.md); the
 * workers then decide what to write, so a conflict may or may not happen:
 *
 *   TROUPE_ADAPTER=openai OPENAI_BASE_URL=http://localhost:11434/v1 TROUPE_MODEL=llama3.2 npx tsx examples/edited-plan-conflict.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { agent, defineTool } from 'troupe';
import { PlanningSession, type ChunkRunner, type Plan } from 'troupe/plan';
import { gitWorktree } from 'troupe/workspaces';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=example', '-c', 'user.email=example@localhost', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });

const proposed: Plan = {
  planSummary: 'Raise the limits in config.txt.',
  chunks: [
    { sequenceIndex: 0, title: 'Raise the timeout', prompt: 'Set the timeout in config.txt to 30 seconds.', dependsOnIndexes: [], complexity: 'Low', role: 'Implementation' },
    { sequenceIndex: 1, title: 'Raise the limit', prompt: 'Raise the limits in config.txt.', dependsOnIndexes: [], complexity: 'Low', role: 'Implementation' },
  ],
};

const write = (content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path: 'config.txt', content } }] });
const scripted = scriptedAdapter({
  replies: { planner: ['{"action":"plan"}', JSON.stringify(proposed)], synthesis: ['Both limits are raised. Chunk 1 conflicted with chunk 0 on the limits line and reconciled both changes on its second attempt.'] },
  rules: [
    { agent: 'worker-0', match: '# Chunk 0', reply: write('name = demo\nlimits = timeout 30s, retries 3\n') },
    { agent: 'worker-1', match: '## Merge conflict', reply: write('name = demo\nlimits = timeout 30s, retries 5\n') },
    { agent: 'worker-1', match: '# Chunk 1', reply: write('name = demo\nlimits = timeout 10s, retries 5\n') },
    { agent: /^worker-/, match: 'written', reply: (r) => (r.text.includes('timeout 30s, retries 5') || r.agent === 'worker-0' ? 'Done.' : 'Done: retries raised to 5.') },
  ],
});

const adapter = adapterFromEnv() ?? scripted;

const base = await mkdtemp(join(tmpdir(), 'troupe-edited-plan-'));
const repo = join(base, 'repo');
try {
  git(base, 'init', '--quiet', '--initial-branch=main', repo);
  await writeFile(join(repo, 'config.txt'), 'name = demo\nlimits = timeout 10s, retries 3\n');
  git(repo, 'add', '--all');
  git(repo, 'commit', '--quiet', '-m', 'init');

  // Chunk 1 finishes after chunk 0 merged, from a worktree prepared before: the merge conflicts.
  let zeroMerged!: () => void;
  const merged = new Promise<void>((resolve) => (zeroMerged = resolve));
  const runChunk: ChunkRunner = async (input) => {
    const writeFileTool = defineTool({
      name: 'write_file',
      description: 'Write config.txt in the workspace',
      parameters: z.object({ path: z.literal('config.txt'), content: z.string() }),
      execute: async ({ path, content }) => (await writeFile(join(input.workspace.path, path), content), `written ${path}`),
    });
    const out = await agent({ name: `worker-${input.chunk.sequenceIndex}`, tools: [writeFileTool] }).run(input.prompt, input.ctx);
    if (input.chunk.sequenceIndex === 1 && input.attempt === 1) await merged;
    return out.output;
  };
  const session = new PlanningSession({ adapter, runChunk, workspace: gitWorktree({ root: join(base, 'worktrees') }), baseDir: repo, maxParallel: 2, retry: { delayMs: 0 } });
  session.emitter.on('chunk.status', (e) => {
    if (e.sequenceIndex === 0 && e.status === 'completed') zeroMerged();
  });
  session.emitter.on('chunk.conflict', (e) => console.log(`conflict: chunk ${e.chunkId} in ${e.paths.join(', ')} with chunk ${e.with.map((w) => w.chunkId).join(', ')} -> ${e.outcome}`));

  const step = await session.submitTask('Raise the limits in config.txt');
  console.log(`proposed: ${step.plan!.chunks.map((c) => c.title).join(' | ')}`);
  const edited = structuredClone(step.plan!);
  edited.chunks[1]!.title = 'Raise the retries';
  edited.chunks[1]!.prompt = 'Set the retries in config.txt to 5; leave the timeout alone.';
  session.editPlan(edited);
  console.log(`approved after editing: ${session.plan!.chunks.map((c) => c.title).join(' | ')}`);
  const done = await session.approvePlan();

  const retry = scripted.inputsOf('worker-1').find((t) => t.includes('## Merge conflict'));
  if (retry) console.log(`the retry was told: ${retry.split('\n').find((l) => l.startsWith('Attempt 1'))}`);
  for (const r of done.outcome!.results) console.log(`chunk ${r.sequenceIndex} "${r.title}": ${r.status} after ${r.attempts} attempt(s), files ${r.files?.join(', ')}`);
  for (const c of done.outcome!.report!.mergeConflicts) console.log(`report: chunk ${c.chunk} conflicted with chunk ${c.with.join(', ')} in ${c.paths.join(', ')}, ${c.resolved ? 'resolved' : 'not resolved'}`);
  for (const m of session.messages) console.log(`[${m.from}] ${m.text}`);
  console.log(`config.txt now: ${(await readFile(join(repo, 'config.txt'), 'utf8')).split('\n')[1]}`);
  console.log(done.outcome!.output);
} finally {
  await rm(base, { recursive: true, force: true });
}
