import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resume } from '../../../src/core/resume.js';
import { checkpointStream } from '../../../src/core/checkpoint.js';
import { fileStore } from '../../../src/persistence/file-store.js';
import { readRun } from '../../../src/persistence/run-log.js';
import { planRunnable } from '../../../src/plan/engine/execute.js';
import type { ChunkRunner } from '../../../src/plan/engine/types.js';
import { runFixture } from '../../helpers/child.js';
import { killPlan } from '../../fixtures/plan/change-then-kill-plan.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Run the fixture, which changes its plan once chunk 0 completed and SIGKILLs itself as soon as the change's promise resolves. */
async function changeThenKill(how: 'change' | 'add' | 'post'): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-durable-change-'));
  dirs.push(dir);
  const { code, output, stderr } = await runFixture('plan/change-then-kill.ts', [dir, how]).exited;
  expect(stderr).toBe('');
  expect(output).toBe('changing\n');
  expect([null, 137]).toContain(code); // killed (tsx reports its child's SIGKILL as 137)
  return dir;
}

describe('a live change is durable once its promise resolves', () => {
  for (const how of ['change', 'add'] as const) {
    it(`control.${how === 'add' ? 'addChunks' : 'change'}: after a SIGKILL in the same tick, the change and chunk 0's success are logged, and the resume runs the changed plan without chunk 0`, { timeout: 60_000 }, async () => {
      const dir = await changeThenKill(how);
      const store = fileStore(dir);
      const log = await readRun('changed', { store });
      expect(log.events.some((e) => e.type === 'chunk.status' && e.sequenceIndex === 0 && e.status === 'completed')).toBe(true);
      expect(log.events.find((e) => e.type === 'plan.changed')).toMatchObject({ id: 1, added: [2] });
      const entries = (await store.read(checkpointStream('changed', '/plan:plan#0'))).records;
      expect(entries).toEqual([expect.objectContaining({ sequenceIndex: 0, status: 'completed', output: 'zero' }), { change: expect.objectContaining({ id: 1 }) }]);

      const ran: number[] = [];
      const runChunk: ChunkRunner = async ({ chunk }) => {
        ran.push(chunk.sequenceIndex);
        return `out ${chunk.sequenceIndex}`;
      };
      const resumed = await resume(planRunnable(killPlan, { runChunk }), 'changed', { store });
      expect(ran.sort()).toEqual([1, 2]);
      expect(resumed.status).toBe('completed');
      expect(resumed.plan.chunks.map((c) => c.sequenceIndex)).toEqual([0, 1, 2]);
      expect(resumed.results.map((r) => [r.sequenceIndex, r.output])).toEqual([[0, 'zero'], [1, 'out 1'], [2, 'out 2']]);
      expect(resumed.changes).toHaveLength(1);
    });
  }

  it("control.post: after a SIGKILL in the same tick, the message is in the resumed plan's messages", { timeout: 60_000 }, async () => {
    const dir = await changeThenKill('post');
    const store = fileStore(dir);
    const resumed = await resume(planRunnable(killPlan, { runChunk: async ({ chunk }) => `out ${chunk.sequenceIndex}` }), 'changed', { store });
    expect(resumed.messages?.map((m) => m.text)).toEqual(['The cache moved.']);
    expect(resumed.results[0]!.output).toBe('zero');
  });
});
