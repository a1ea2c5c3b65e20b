import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, TroupeError } from '../../src/core/errors.js';
import { memoryStore } from '../../src/core/memory-store.js';
import { TaskStore, type TaskTransition } from '../../src/coordination/task-store.js';

describe('TaskStore', () => {
  it('hands a task to exactly one of many concurrent claimers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 40 }), fc.integer({ min: 1, max: 5 }), async (workers, taskCount) => {
        const store = new TaskStore(Array.from({ length: taskCount }, (_, i) => ({ id: `t${i}`, title: `T${i}` })));
        const claims = await Promise.all(
          Array.from({ length: workers }, async (_, i) => {
            await Promise.resolve();
            return store.claim(`w${i}`);
          }),
        );
        const won = claims.filter((c) => c !== undefined);
        expect(won).toHaveLength(Math.min(workers, taskCount));
        expect(new Set(won.map((c) => c!.id)).size).toBe(won.length);
      }),
    );
  });

  it('makes a task ready when its dependencies are done, and returns a task reassigned to the worker first', () => {
    const events: TaskTransition[] = [];
    const store = new TaskStore([{ id: 'a', title: 'A' }, { id: 'b', title: 'B', dependsOn: ['a'] }], { onTransition: (t) => events.push(t), now: () => 7 });
    expect(store.ready().map((t) => t.id)).toEqual(['a']);
    expect(store.claim('w1', 'b')).toBeUndefined();
    store.claim('w1');
    store.start('a', 'w1');
    expect(store.get('a')).toMatchObject({ status: 'in-progress', startedAt: 7 });
    expect(() => store.start('a', 'w2')).toThrow(TroupeError);
    store.reassign('a', 'w2');
    expect(store.claim('w2')).toMatchObject({ id: 'a', status: 'claimed', assignee: 'w2' });
    store.start('a', 'w2');
    store.complete('a', 'ok');
    expect(store.ready().map((t) => t.id)).toEqual(['b']);
    expect(events.map((e) => `${e.task.id}:${e.from ?? ''}>${e.to}`)).toEqual([
      'a:>pending', 'b:>pending', 'a:pending>claimed', 'a:claimed>in-progress', 'a:in-progress>claimed', 'a:claimed>in-progress', 'a:in-progress>done',
    ]);
    expect(events.map((e) => e.version)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(() => store.complete('a', 'again')).toThrow(/is done; expected claimed or in-progress/);
  });

  it('splits a task: parts inherit its dependencies, its dependents depend on every part', () => {
    const store = new TaskStore([{ id: 'a', title: 'A' }, { id: 'b', title: 'B', dependsOn: ['a'] }, { id: 'c', title: 'C', dependsOn: ['b'] }]);
    const parts = store.split('b', [{ id: 'b1', title: 'B1' }, { title: 'B2' }]);
    expect(parts.map((p) => [p.id, p.dependsOn])).toEqual([['b1', ['a']], ['t4', ['a']]]);
    expect(store.get('b')).toBeUndefined();
    expect(store.get('c')!.dependsOn).toEqual(['b1', 't4']);
    expect(() => store.split('a', [{ id: 'c', title: 'dup' }])).toThrow(/already exists/);
    expect(() => store.split('a', [])).toThrow(ConfigurationError);
  });

  it('cancels and fails with a cascade: dependents of a failed task are cancelled, of a blocked one blocked', () => {
    const store = new TaskStore([
      { id: 'a', title: 'A' }, { id: 'b', title: 'B', dependsOn: ['a'] }, { id: 'c', title: 'C', dependsOn: ['b'] },
      { id: 'x', title: 'X' }, { id: 'y', title: 'Y', dependsOn: ['x'] },
    ]);
    store.claim('w', 'a');
    store.fail('a', 'boom');
    expect(store.list().map((t) => [t.id, t.status])).toEqual([['a', 'failed'], ['b', 'cancelled'], ['c', 'cancelled'], ['x', 'pending'], ['y', 'pending']]);
    store.block('x', 'needs a person');
    expect(store.get('y')).toMatchObject({ status: 'blocked', result: 'depends on task "x", which is blocked' });
    expect(store.allResolved()).toBe(true);
    expect(() => store.cancel('a')).toThrow(TroupeError);
    expect(() => store.add({ id: 'z', title: 'Z', dependsOn: ['nope'] })).toThrow(/unknown task "nope"/);
    expect(() => store.add({ id: 'z', title: '' })).toThrow(ConfigurationError);
  });

  it('saves to a store and refuses to overwrite a list changed elsewhere', async () => {
    const store = memoryStore();
    const mine = new TaskStore([{ id: 'a', title: 'A' }]);
    await mine.save(store, 'lists/main');
    const theirs = (await TaskStore.load(store, 'lists/main'))!;
    theirs.claim('w2');
    await theirs.save(store, 'lists/main');
    mine.claim('w1');
    const error = await mine.save(store, 'lists/main').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'task_conflict' });
    expect(((await TaskStore.load(store, 'lists/main'))!).get('a')).toMatchObject({ status: 'claimed', assignee: 'w2' });
    expect(await TaskStore.load(store, 'nothing')).toBeUndefined();
    await store.set('lists/bad', { tasks: 3 });
    await expect(TaskStore.load(store, 'lists/bad')).rejects.toMatchObject({ code: 'store_error' });
  });

  it('lets only one of two concurrent saves over the same version through (compare-and-set)', async () => {
    const store = memoryStore();
    await new TaskStore([{ id: 'a', title: 'A' }]).save(store, 'lists/main');
    const first = (await TaskStore.load(store, 'lists/main'))!;
    const second = (await TaskStore.load(store, 'lists/main'))!;
    first.claim('w1');
    second.claim('w2');
    // Both read the stored version before either writes: only setIf tells them apart.
    const results = await Promise.allSettled([first.save(store, 'lists/main'), second.save(store, 'lists/main')]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
    expect(rejected.reason).toMatchObject({ code: 'task_conflict' });
    const winner = results[0]!.status === 'fulfilled' ? 'w1' : 'w2';
    expect((await TaskStore.load(store, 'lists/main'))!.get('a')).toMatchObject({ status: 'claimed', assignee: winner });
  });

  it('saves a new list only where there is none yet', async () => {
    const store = memoryStore();
    const results = await Promise.allSettled([new TaskStore([{ id: 'a', title: 'A' }]).save(store, 'l'), new TaskStore([{ id: 'b', title: 'B' }]).save(store, 'l')]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((await TaskStore.load(store, 'l'))!.list()).toHaveLength(1);
  });
});
