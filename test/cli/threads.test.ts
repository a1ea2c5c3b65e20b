// `troupe run ... --thread <id> --store <dir>`: a conversation kept in a file
// store, continued by the next command with the same thread.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { fileStore } from '../../src/persistence/file-store.js';
import { readRun } from '../../src/persistence/run-log.js';
import { readThread } from '../../src/persistence/threads.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

async function troupe(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t), env: {} });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('troupe run --thread', () => {
  it('continues the thread kept in the store: the second run\'s agent gets the first exchange as its history', async () => {
    const agents = temp('troupe-thread-agents-');
    mkdirSync(agents, { recursive: true });
    writeFileSync(join(agents, 'support.md'), '---\ndescription: Answers customers\n---\nYou answer customers of a bicycle shop.\n');
    const storeDir = temp('troupe-thread-store-');
    const first = await troupe('run', agents, 'support', 'My name is Ada.', '--store', storeDir, '--thread', 'customer-42', '--quiet');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('thread: customer-42 (2 messages; `--thread customer-42` continues it)');
    const second = await troupe('run', agents, 'support', 'What is my name?', '--store', storeDir, '--thread', 'customer-42', '--quiet');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('thread: customer-42 (4 messages;');

    const store = fileStore(storeDir);
    const thread = await readThread('customer-42', { store });
    expect(thread!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(thread!.messages[2]!.text).toBe('What is my name?');
    const log = await readRun(thread!.thread.lastRunId!, { store });
    const turn = log.events.find((e) => e.type === 'model.turn') as TroupeEvent<'model.turn'>;
    expect(turn.input).toBe('What is my name?');
    expect(turn.spec.history).toEqual([
      { role: 'user', text: 'My name is Ada.' },
      { role: 'assistant', text: thread!.messages[1]!.text },
    ]);
  });

  it('needs a store for the thread', async () => {
    const agents = temp('troupe-thread-agents-');
    writeFileSync(join(agents, 'support.md'), '---\ndescription: Answers customers\n---\nYou answer.\n');
    const result = await troupe('run', agents, 'support', 'Hi', '--thread', 'customer-42', '--quiet');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--thread customer-42 needs a store to keep the thread in: give --store <dir> (or set TROUPE_STORE)');
  });
});
