import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/core/memory-store.js';
import { ApprovalQueue, type ApprovalDecision, type ApprovalRequest } from '../../src/scheduler/approvals.js';

function manual() {
  const asked: ApprovalRequest[] = [];
  const answers: Array<(d: ApprovalDecision) => void> = [];
  const queue = new ApprovalQueue({
    handler: (request) =>
      new Promise<ApprovalDecision>((resolve) => {
        asked.push(request);
        answers.push(resolve);
      }),
  });
  return { queue, asked, answer: (d: ApprovalDecision) => answers.shift()!(d) };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('ApprovalQueue', () => {
  it('hands requests to the handler one at a time and reports the pending count', async () => {
    const { queue, asked, answer } = manual();
    const counts: number[] = [];
    queue.on('pending', (n) => counts.push(n));
    const a = queue.request({ tool: 'write_file', agent: 'w1' });
    const b = queue.request({ tool: 'delete', agent: 'w2' });
    await tick();
    expect(asked.map((r) => r.agent)).toEqual(['w1']);
    expect(queue.pending).toBe(2);
    answer({ approved: true });
    await tick();
    expect(asked.map((r) => r.agent)).toEqual(['w1', 'w2']);
    answer({ approved: false });
    expect(await a).toBe(true);
    expect(await b).toBe(false);
    await tick();
    expect(queue.pending).toBe(0);
    expect(counts).toEqual([1, 2, 1, 0]);
  });

  it('remembers session and global decisions but not once', async () => {
    const { queue, asked, answer } = manual();
    const once = queue.request({ tool: 'shell', agent: 'w1' });
    await tick();
    answer({ approved: true, scope: 'once' });
    await once;
    const again = queue.request({ tool: 'shell', agent: 'w1' });
    await tick();
    expect(asked).toHaveLength(2);
    answer({ approved: true, scope: 'session' });
    await again;
    expect(await queue.request({ tool: 'shell', agent: 'w1' })).toBe(true); // remembered for w1
    const other = queue.request({ tool: 'shell', agent: 'w2' }); // another session asks again
    await tick();
    expect(asked).toHaveLength(3);
    answer({ approved: false, scope: 'global' });
    expect(await other).toBe(false);
    expect(await queue.request({ tool: 'shell', agent: 'w3' })).toBe(false); // global
    expect(await queue.request({ tool: 'shell', agent: 'w1' })).toBe(true); // the session decision still wins for w1
    await queue.forgetAll();
    void queue.request({ tool: 'shell', agent: 'w3' });
    await tick();
    expect(asked).toHaveLength(4);
  });

  it('keeps remembered decisions in the store it is given: per run for a session, everywhere for global', async () => {
    const store = memoryStore();
    const answers: ApprovalDecision[] = [{ approved: true, scope: 'session' }, { approved: false, scope: 'session' }, { approved: true, scope: 'global' }];
    const queue = new ApprovalQueue({ handler: () => answers.shift()!, store });
    expect(await queue.request({ tool: 'shell', agent: 'w1', sessionId: 'op-3', runId: 'run-a' })).toBe(true);
    expect(await queue.request({ tool: 'shell', agent: 'w1', sessionId: 'op-3', runId: 'run-b' })).toBe(false); // op-3 of another run
    expect(await store.list('approvals/')).toEqual(['approvals/session/run-a/op-3/shell', 'approvals/session/run-b/op-3/shell']);
    const another = new ApprovalQueue({ handler: () => Promise.reject(new Error('not asked')), store });
    expect(await another.request({ tool: 'shell', agent: 'w1', sessionId: 'op-3', runId: 'run-a' })).toBe(true);
    await queue.forgetSession('op-3', 'run-a');
    expect(await store.list('approvals/')).toEqual(['approvals/session/run-b/op-3/shell']);
    expect(await queue.request({ tool: 'deploy', agent: 'w2' })).toBe(true);
    expect(await store.get('approvals/global/deploy')).toBe(true);
  });

  it('rejects a waiting request when its signal aborts', async () => {
    const { queue, answer } = manual();
    const first = queue.request({ tool: 'a', agent: 'w1' });
    const controller = new AbortController();
    const second = queue.request({ tool: 'b', agent: 'w2' }, { signal: controller.signal });
    controller.abort();
    await expect(second).rejects.toMatchObject({ code: 'cancelled' });
    expect(queue.pending).toBe(1);
    answer({ approved: true });
    expect(await first).toBe(true);
  });
});
