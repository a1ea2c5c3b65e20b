import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { SimulatedClock } from '../../../src/core/clock.js';
import type { TroupeEvent } from '../../../src/core/events.js';
import { defineTool } from '../../../src/core/tools.js';
import { agent } from '../../../src/patterns/agent.js';
import { executePlan } from '../../../src/plan/engine/execute.js';
import type { ChunkRunner } from '../../../src/plan/engine/types.js';
import { fileLocking } from '../../../src/workspaces/file-locking.js';
import { gitWorktree } from '../../../src/workspaces/git-worktree.js';
import { git, makeRepo } from '../../helpers/git-repo.js';
import { chunk, planOf } from '../helpers.js';

let dispose: (() => void) | undefined;
afterEach(() => {
  dispose?.();
  dispose = undefined;
});

/** A worker whose `write_file` writes into its chunk's workspace. */
function workerIn(path: string, name: string) {
  const writeFileTool = defineTool({
    name: 'write_file',
    description: 'Write a whole file',
    parameters: z.object({ path: z.string(), content: z.string() }),
    execute: ({ path: file, content }) => (writeFileSync(join(path, file), content), 'written'),
  });
  return agent({ name, tools: [writeFileTool] });
}

const write = (path: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path, content } }] });

describe('merge conflicts between chunks', () => {
  it('tells the retry about the conflict and the other change, emits chunk.conflict, and the aggregate reports it', async () => {
    const { repo, root, dispose: d } = makeRepo();
    dispose = d;
    const adapter = scriptedAdapter({
      replies: {
        'worker-0': [write('app.txt', 'line 1\nline 2 (zero)\nline 3\n'), 'chunk 0 done'],
        'worker-1': [
          write('app.txt', 'line 1\nline 2 (one)\nline 3\n'),
          'chunk 1 done',
          write('app.txt', 'line 1\nline 2 (zero) (one)\nline 3\n'),
          'chunk 1 reconciled both changes',
        ],
        synthesis: ['Both changes landed; chunk 1 conflicted with chunk 0 and reconciled them on its second attempt.'],
      },
    });
    // Chunk 1 finishes only after chunk 0 merged, from a worktree prepared before: its merge conflicts.
    let zeroMerged!: () => void;
    const merged = new Promise<void>((resolve) => (zeroMerged = resolve));
    const runChunk: ChunkRunner = async (input) => {
      const out = await workerIn(input.workspace.path, `worker-${input.chunk.sequenceIndex}`).run(input.prompt, input.ctx);
      if (input.chunk.sequenceIndex === 1 && input.attempt === 1) await merged;
      return out.output;
    };
    const events: TroupeEvent[] = [];
    const outcome = await executePlan(planOf(chunk(0), chunk(1)), {
      adapter,
      clock: new SimulatedClock(),
      runChunk,
      workspace: gitWorktree({ root }),
      baseDir: repo,
      maxParallel: 2,
      retry: { delayMs: 0 },
      aggregate: true,
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'chunk.status' && e.sequenceIndex === 0 && e.status === 'completed') zeroMerged();
      },
    });
    expect(outcome.results.map((r) => [r.status, r.attempts])).toEqual([['completed', 1], ['completed', 2]]);
    expect(readFileSync(join(repo, 'app.txt'), 'utf8')).toBe('line 1\nline 2 (zero) (one)\nline 3\n');
    // The retry's prompt carries the conflict: the path, and chunk 0's change of it.
    const retry = adapter.inputsOf('worker-1')[2]!;
    expect(retry).toContain('## Merge conflict');
    expect(retry).toContain('conflicts in app.txt');
    expect(retry).toContain('### Chunk 0: Chunk A');
    expect(retry).toContain('+line 2 (zero)');
    // One event when it conflicted, one when the retry merged.
    const conflicts = events.filter((e): e is TroupeEvent<'chunk.conflict'> => e.type === 'chunk.conflict');
    expect(conflicts.map((e) => [e.sequenceIndex, e.attempt, e.paths, e.with.map((w) => w.sequenceIndex), e.outcome])).toEqual([
      [1, 1, ['app.txt'], [0], 'retrying'],
      [1, 2, ['app.txt'], [0], 'resolved'],
    ]);
    expect(outcome.results[1]!.mergeConflicts).toEqual([
      { attempt: 1, paths: ['app.txt'], with: [{ sequenceIndex: 0, title: 'Chunk A', paths: ['app.txt'], patch: expect.stringContaining('+line 2 (zero)') }], resolved: true },
    ]);
    // Files changed, from the worktrees' diffs; both chunks changed app.txt.
    expect(outcome.results.map((r) => r.files)).toEqual([['app.txt'], ['app.txt']]);
    expect(outcome.report!.conflicts).toEqual([{ file: 'app.txt', chunks: [0, 1] }]);
    expect(outcome.report!.mergeConflicts).toEqual([{ chunk: 1, attempt: 1, paths: ['app.txt'], with: [0], resolved: true }]);
    expect(adapter.inputsOf('synthesis')[0]).toContain('Merge conflict (attempt 1) in app.txt with chunk 0: resolved by a later attempt');
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });

  it('fails the chunk with a merge_conflict error when no attempt is left', async () => {
    const { repo, root, dispose: d } = makeRepo();
    dispose = d;
    let zeroMerged!: () => void;
    const merged = new Promise<void>((resolve) => (zeroMerged = resolve));
    const events: TroupeEvent[] = [];
    const outcome = await executePlan(planOf(chunk(0), chunk(1)), {
      clock: new SimulatedClock(),
      runChunk: async (input) => {
        writeFileSync(join(input.workspace.path, 'app.txt'), `changed by ${input.chunk.sequenceIndex}\n`);
        if (input.chunk.sequenceIndex === 1) await merged;
        return 'done';
      },
      workspace: gitWorktree({ root }),
      baseDir: repo,
      retry: { maxRetries: 0 },
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'chunk.status' && e.sequenceIndex === 0 && e.status === 'completed') zeroMerged();
      },
    });
    expect(outcome.results[1]).toMatchObject({ status: 'failed', error: 'Merging chunk 1 conflicted in app.txt with chunk 0' });
    expect(events.filter((e) => e.type === 'chunk.conflict').map((e) => (e as TroupeEvent<'chunk.conflict'>).outcome)).toEqual(['failed']);
    expect(readFileSync(join(repo, 'app.txt'), 'utf8')).toBe('changed by 0\n');
  });

  it('lists the files each chunk changed with file locking too', async () => {
    const { repo, dispose: d } = makeRepo();
    dispose = d;
    const outcome = await executePlan(planOf(chunk(0, [], { workingScope: ['docs/**'] }), chunk(1, [], { workingScope: ['app.txt'] })), {
      clock: new SimulatedClock(),
      runChunk: async (input) => {
        if (input.chunk.sequenceIndex === 0) {
          await import('node:fs/promises').then((fs) => fs.mkdir(join(input.workspace.path, 'docs'), { recursive: true }));
          writeFileSync(join(input.workspace.path, 'docs', 'guide.md'), '# guide\n');
        } else writeFileSync(join(input.workspace.path, 'app.txt'), 'rewritten\n');
        return 'done';
      },
      workspace: fileLocking({ crossProcess: false }),
      baseDir: repo,
    });
    expect(outcome.results.map((r) => r.files)).toEqual([['docs/guide.md'], ['app.txt']]);
  });
});
