/**
 * Worktrees: two workers edit one repository at the same time, each on its
 * own branch in its own git worktree, and their work is merged back with
 * `--no-ff`. Runs offline on the scripted adapter in a throw-away repository,
 * which it removes afterwards.
 *
 *   npx tsx examples/worktrees.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { agent, defineTool, run } from 'troupe';
import { gitWorktree, type Workspace } from 'troupe/workspaces';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

/** A `write_file` tool that writes inside one workspace and nowhere else. */
function writeFileTool(workspace: Workspace) {
  return defineTool({
    name: 'write_file',
    description: 'Write a text file, relative to the workspace',
    parameters: z.object({ path: z.string(), content: z.string() }),
    async execute({ path, content }) {
      const target = resolve(workspace.path, path);
      const rel = relative(workspace.path, target);
      if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new Error(`${path} is outside the workspace`);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
      return `wrote ${rel}`;
    },
  });
}

// A real model when the environment names one (TROUPE_ADAPTER, see troupe/adapters/env); else the scripted
// workers: each first calls write_file, then reports what it did.
const adapter = adapterFromEnv() ?? scriptedAdapter({
  replies: {
    docs: [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'docs/usage.md', content: '# Usage\n\nRun `greet()`.\n' } }] },
      'Documented greet().',
    ],
    coder: [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'src/greet.js', content: 'export const greet = () => "hi";\n' } }] },
      'Implemented greet().',
    ],
  },
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=example', '-c', 'user.email=example@localhost', ...args], { cwd, encoding: 'utf8' });

const scratch = await mkdtemp(join(tmpdir(), 'troupe-example-'));
const repo = join(scratch, 'repo');
await mkdir(repo);
git(repo, 'init', '--quiet', '--initial-branch=main');
await writeFile(join(repo, 'README.md'), '# greeter\n');
git(repo, 'add', '--all');
git(repo, 'commit', '--quiet', '-m', 'Initial commit');

const strategy = gitWorktree({ root: join(scratch, 'worktrees') });
const chunks = [
  { id: 'docs', planId: 'greeter', title: 'Document greet()' },
  { id: 'coder', planId: 'greeter', title: 'Implement greet()' },
];
const workspaces: Workspace[] = [];
try {
  // Prepare a worktree per chunk and run both workers in parallel, each in its own.
  const outputs = await Promise.all(
    chunks.map(async (chunk) => {
      const ws = await strategy.prepare({ ...chunk, baseDir: repo });
      workspaces.push(ws);
      const worker = agent({ name: chunk.id, workspace: ws.path, tools: [writeFileTool(ws)] });
      const result = await run(worker, chunk.title, { adapter });
      return `${chunk.id} on ${ws.branch}: ${result.output}`;
    }),
  );
  console.log(outputs.join('\n'));
  // Merge in a fixed order.
  for (const ws of [...workspaces].sort((a, b) => a.chunkId.localeCompare(b.chunkId))) {
    const merged = await strategy.merge(ws);
    console.log(`merge ${ws.branch}: ${merged.status}`);
  }
  console.log(git(repo, 'log', '--format=%s', '--first-parent').trim());
  console.log(git(repo, 'ls-files').trim());
} finally {
  for (const ws of workspaces) await strategy.cleanup(ws);
  await rm(scratch, { recursive: true, force: true });
}
