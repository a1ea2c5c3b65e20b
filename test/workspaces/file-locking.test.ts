import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock, type Clock } from '../../src/core/clock.js';
import { fileLocking, scopesOverlap, staticPrefix } from '../../src/workspaces/file-locking.js';
import type { Workspace } from '../../src/workspaces/types.js';
import { makeRepo } from '../helpers/git-repo.js';
import { bundled } from '../helpers/bundle.js';

const disposers: Array<() => void> = [];
afterEach(() => {
  for (const dispose of disposers.splice(0)) dispose();
});

function setup(options: { crossProcess?: boolean } = {}) {
  const r = makeRepo();
  disposers.push(r.dispose);
  return { dir: r.repo, lockDir: join(r.root, 'locks'), strategy: fileLocking({ lockDir: join(r.root, 'locks'), crossProcess: options.crossProcess ?? false }) };
}

/** Track when a promise settles, without awaiting it. */
function track(promise: Promise<Workspace>) {
  const state = { done: false, value: undefined as Workspace | undefined, promise };
  void promise.then((v) => {
    state.done = true;
    state.value = v;
  }, () => {
    state.done = true;
  });
  return state;
}

/** Long enough for a granted prepare to finish (it reads the scope's files). */
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('scope overlap', () => {
  it('takes the static prefix of a glob', () => {
    expect(staticPrefix('src/lib/*.ts')).toEqual(['src', 'lib']);
    expect(staticPrefix('./src//app.ts')).toEqual(['src', 'app.ts']);
    expect(staticPrefix('**/*.md')).toEqual([]);
    expect(staticPrefix('Docs/{a,b}/x')).toEqual(['docs']);
    expect(() => staticPrefix('../outside')).toThrow(/relative path/);
    expect(() => staticPrefix('/etc/passwd')).toThrow(/relative path/);
    expect(() => staticPrefix('')).toThrow(/non-empty/);
  });

  it('is conservative: prefixes that nest overlap, siblings do not', () => {
    expect(scopesOverlap(['src/**'], ['src/a.ts'])).toBe(true);
    expect(scopesOverlap(['src'], ['src/deep/file.ts'])).toBe(true);
    expect(scopesOverlap(['src/*.ts'], ['src/*.md'])).toBe(true);
    expect(scopesOverlap(['**/*.ts'], ['docs/x.md'])).toBe(true);
    expect(scopesOverlap([], ['docs/x.md'])).toBe(true);
    expect(scopesOverlap(['src/a.ts'], ['src/b.ts'])).toBe(false);
    expect(scopesOverlap(['src/**', 'test/**'], ['docs/**'])).toBe(false);
    expect(scopesOverlap(['src/ab'], ['src/a'])).toBe(false);
  });
});

describe('fileLocking', () => {
  it('runs chunks with disjoint scopes in parallel in the base directory', async () => {
    const { dir, strategy } = setup();
    const [a, b] = await Promise.all([
      strategy.prepare({ id: 'a', title: 'A', workingScope: ['src/**'], baseDir: dir }),
      strategy.prepare({ id: 'b', title: 'B', workingScope: ['docs/**', 'README.md'], baseDir: dir }),
    ]);
    expect(a.path).toBe(dir);
    expect(b.path).toBe(dir);
    await strategy.cleanup(a);
    await strategy.cleanup(b);
  });

  it('makes overlapping scopes wait in order, without overtaking', async () => {
    const { dir, strategy } = setup();
    const a = await strategy.prepare({ id: 'a', title: 'A', workingScope: ['src/lib/**'], baseDir: dir });
    const b = track(strategy.prepare({ id: 'b', title: 'B', workingScope: ['src/**'], baseDir: dir }));
    const c = track(strategy.prepare({ id: 'c', title: 'C', workingScope: ['src/app/main.ts'], baseDir: dir }));
    const d = track(strategy.prepare({ id: 'd', title: 'D', workingScope: ['docs/**'], baseDir: dir }));
    await d.promise; // d is disjoint from everything: granted at once
    await settle();
    // c is disjoint from a but must not overtake b.
    expect([b.done, c.done]).toEqual([false, false]);
    await strategy.cleanup(a);
    await b.promise; // granted once a is released (waited for, not timed: a busy machine may take a while)
    await settle();
    expect(c.done).toBe(false);
    await strategy.cleanup(b.value!);
    await c.promise; // granted once the lock is free (a fixed wait could be too short on a busy machine)
    expect(c.done).toBe(true);
    await strategy.cleanup(c.value!);
    await strategy.cleanup(d.value!);
  });

  it('treats a chunk without a scope as locking the whole directory', async () => {
    const { dir, strategy } = setup();
    const all = await strategy.prepare({ id: 'all', title: 'All', baseDir: dir });
    const other = track(strategy.prepare({ id: 'x', title: 'X', workingScope: ['x.txt'], baseDir: dir }));
    await settle();
    expect(other.done).toBe(false);
    await strategy.cleanup(all);
    await strategy.cleanup(await other.promise);
  });

  it('releases the lock when the chunk fails', async () => {
    const { dir, strategy } = setup();
    const failing = async () => {
      const ws = await strategy.prepare({ id: 'fails', title: 'Fails', workingScope: ['src/**'], baseDir: dir });
      try {
        throw new Error('worker crashed');
      } finally {
        await strategy.cleanup(ws);
      }
    };
    const first = failing();
    const next = track(strategy.prepare({ id: 'next', title: 'Next', workingScope: ['src/a.ts'], baseDir: dir }));
    await expect(first).rejects.toThrow('worker crashed');
    await next.promise; // granted once the lock is free (a fixed wait could be too short on a busy machine)
    expect(next.done).toBe(true);
    await strategy.cleanup(next.value!);
  });

  it('cancels a waiting prepare, which then holds nothing and blocks no one', async () => {
    const { dir, strategy } = setup();
    const a = await strategy.prepare({ id: 'a', title: 'A', workingScope: ['src/**'], baseDir: dir });
    const controller = new AbortController();
    const waiting = strategy.prepare({ id: 'b', title: 'B', workingScope: ['**'], baseDir: dir }, { signal: controller.signal });
    const behind = track(strategy.prepare({ id: 'c', title: 'C', workingScope: ['docs/**'], baseDir: dir }));
    await settle();
    expect(behind.done).toBe(false); // docs/** overlaps the waiting **
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'cancelled' });
    await behind.promise; // granted once the lock is free (a fixed wait could be too short on a busy machine)
    expect(behind.done).toBe(true);
    await strategy.cleanup(a);
    await strategy.cleanup(behind.value!);
    // b can be prepared again: nothing was left behind.
    await strategy.cleanup(await strategy.prepare({ id: 'b', title: 'B', workingScope: ['**'], baseDir: dir }));
  });

  it('refuses bad scopes and a chunk prepared twice', async () => {
    const { dir, strategy } = setup();
    await expect(strategy.prepare({ id: 'x', title: 'X', workingScope: ['../etc'], baseDir: dir })).rejects.toMatchObject({ code: 'invalid_option' });
    const ws = await strategy.prepare({ id: 'x', title: 'X', workingScope: ['a'], baseDir: dir });
    await expect(strategy.prepare({ id: 'x', title: 'X', workingScope: ['b'], baseDir: dir })).rejects.toMatchObject({ code: 'workspace_error' });
    await strategy.cleanup(ws);
    expect(() => fileLocking({ pollMs: -1 })).toThrow('Expected `pollMs` to be a positive number, got -1 (number)');
  });

  it('excludes another process holding the lock on the same directory', async () => {
    const { dir, lockDir } = setup();
    const child = spawn(process.execPath, [bundled(join(import.meta.dirname, 'lock-holder.ts')), dir, lockDir], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    try {
      const lines: string[] = [];
      let notify = () => {};
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        lines.push(...chunk.split('\n').filter(Boolean));
        notify();
      });
      const waitFor = (line: string) =>
        new Promise<void>((resolve) => {
          notify = () => lines.includes(line) && resolve();
          notify();
        });
      await waitFor('locked');
      // Count the polls so we know this process tried (and failed) several times.
      let polls = 0;
      let pollsSeen = () => {};
      const counting: Clock = {
        now: () => realClock.now(),
        setTimer: (fn, ms) => {
          polls += 1;
          pollsSeen();
          return realClock.setTimer(fn, ms);
        },
      };
      const strategy = fileLocking({ lockDir, pollMs: 10, clock: counting });
      // A disjoint scope: only the cross-process lock can make it wait.
      const mine = track(strategy.prepare({ id: 'parent', title: 'Parent', workingScope: ['docs/**'], baseDir: dir }));
      await new Promise<void>((resolve) => {
        pollsSeen = () => polls >= 3 && resolve();
      });
      expect(mine.done).toBe(false);
      child.stdin.write('release\n');
      const ws = await mine.promise;
      expect(lines).toContain('released');
      await strategy.cleanup(ws);
    } finally {
      child.kill();
      if (child.exitCode === null) await once(child, 'exit');
    }
  }, 90_000);
});

describe('scope overlap (properties)', () => {
  const segment = fc.stringMatching(/^[a-zA-Z0-9_.-]{1,6}$/).filter((s) => s !== '.' && s !== '..');
  const path = fc.array(segment, { minLength: 1, maxLength: 5 });
  /** A glob that matches `p`: a directory above it, the path itself, or the path with a wildcard from some depth on. */
  const globFor = (p: string[]) =>
    fc.oneof(
      fc.nat(p.length - 1).map((n) => p.slice(0, n + 1).join('/')),
      fc.nat(p.length - 1).map((n) => [...p.slice(0, n), '**'].join('/')),
      fc.nat(p.length - 1).map((n) => [...p.slice(0, n), '*', ...p.slice(n + 1)].join('/')),
    );

  it('never calls two globs disjoint when both match one path', () => {
    fc.assert(
      fc.property(
        path.chain((p) => fc.tuple(globFor(p), globFor(p))),
        ([a, b]) => scopesOverlap([a], [b]),
      ),
    );
  });

  it('calls plain paths disjoint exactly when neither contains the other', () => {
    fc.assert(
      fc.property(path, path, (a, b) => {
        const la = a.map((s) => s.toLowerCase());
        const lb = b.map((s) => s.toLowerCase());
        const nested = la.every((s, i) => i >= lb.length || lb[i] === s);
        expect(scopesOverlap([a.join('/')], [b.join('/')])).toBe(nested);
      }),
    );
  });
});
