import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { workspaceSuite } from '../../src/testing/workspace-suite.js';
import { fileLocking } from '../../src/workspaces/file-locking.js';
import { gitWorktree } from '../../src/workspaces/git-worktree.js';
import { inMemory } from '../../src/workspaces/in-memory.js';
import { withFallback } from '../../src/workspaces/fallback.js';
import { noWorkspace } from '../../src/workspaces/types.js';
import { makeFolder, makeRepo, tempDir } from '../helpers/git-repo.js';

const runner = { describe, it };

workspaceSuite(
  'gitWorktree',
  () => {
    const { repo, root, dispose } = makeRepo();
    return { strategy: gitWorktree({ root }), baseDir: repo, close: dispose };
  },
  { isolated: true, runner },
);

workspaceSuite('fileLocking', () => {
  const { repo, root, dispose } = makeRepo();
  return { strategy: fileLocking({ lockDir: join(root, 'locks') }), baseDir: repo, close: dispose };
}, { runner });

workspaceSuite(
  'inMemory',
  () => {
    const { dir, dispose } = makeFolder();
    return { strategy: inMemory(), baseDir: dir, close: dispose };
  },
  { readOnly: true, runner },
);

workspaceSuite('withFallback(gitWorktree, fileLocking) outside a repository', () => {
  const { dir, dispose } = makeFolder();
  const locks = tempDir('troupe-locks-');
  return {
    strategy: withFallback(gitWorktree({ root: join(locks, 'wt') }), fileLocking({ lockDir: locks })),
    baseDir: dir,
    close: () => {
      dispose();
      rmSync(locks, { recursive: true, force: true });
    },
  };
}, { runner });

workspaceSuite(
  'noWorkspace',
  () => {
    const { dir, dispose } = makeFolder();
    return { strategy: noWorkspace(), baseDir: dir, close: dispose };
  },
  { readOnly: true, runner },
);
