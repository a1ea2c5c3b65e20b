// Threads across processes, on the stores several processes share: a file
// store folder and Redis. One child process runs on a thread, another
// continues it; two children that start on one thread at once: exactly one
// runs. (On the memory store, within one process: test/core/threads.test.ts.)
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { redisStore } from '../../src/integrations/redis/store.js';
import { fileStore } from '../../src/persistence/file-store.js';
import { readThread } from '../../src/persistence/threads.js';
import type { Store } from '../../src/core/store.js';
import { closedAfterEach, redisTarget, testPrefixes } from '../helpers/redis.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { bundled } from '../helpers/bundle.js';

const script = join(import.meta.dirname, '..', 'fixtures', 'persistence', 'thread-runner.ts');
const { url } = redisTarget();
const prefix = testPrefixes(url);
const closeLater = closedAfterEach();
const tempDir = tempDirs('troupe-threads-');

/** A child running thread-runner.ts: its lines as they come, stdin to talk to it. */
class Runner {
  readonly child: ChildProcess;
  #out = '';
  #err = '';
  #waiters: Array<() => void> = [];
  readonly exited: Promise<void>;

  constructor(args: string[]) {
    this.child = spawn(process.execPath, [bundled(script), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.#out += chunk;
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.#err += chunk));
    this.exited = new Promise((resolve, reject) =>
      this.child.once('exit', (code) => {
        for (const wake of this.#waiters.splice(0)) wake();
        if (code === 0) resolve();
        else reject(new Error(`thread-runner exited with ${code}: ${this.#err}`));
      }),
    );
    running.push(this);
  }

  /** The first line starting with `word`, once it is printed. */
  async line(word: string): Promise<string> {
    for (;;) {
      const found = this.#out.split('\n').find((l) => l.startsWith(word));
      if (found !== undefined) return found;
      if (this.child.exitCode !== null) throw new Error(`thread-runner ended without "${word}": ${this.#out}${this.#err}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  say(word: string): void {
    this.child.stdin!.write(`${word}\n`);
  }

  /** Run to the end: the parsed result, or the refusal's code. */
  async result(): Promise<{ output: string; history: Array<{ role: string; text: string }> } | { refused: string }> {
    await this.exited;
    const line = this.#out.split('\n').find((l) => l.startsWith('result ') || l.startsWith('refused '))!;
    return line.startsWith('result ') ? JSON.parse(line.slice('result '.length)) : { refused: line.slice('refused '.length) };
  }
}

const running: Runner[] = [];
afterEach(() => {
  for (const r of running.splice(0)) if (r.child.exitCode === null) r.child.kill('SIGKILL');
});

/** Run one child on `thread` to the end. */
async function runOnce(where: string[], thread: string, input: string) {
  const runner = new Runner([...where, thread, input]);
  await runner.line('ready');
  runner.say('go');
  return runner.result();
}

function threadsAcrossProcesses(name: string, setup: () => { where: string[]; store: Store }) {
  describe(name, () => {
    it('a thread one process ran is continued by another, and read back by a third', async () => {
      const { where, store } = setup();
      expect(await runOnce(where, 'customer-7', 'My name is Ada.')).toEqual({ output: '(0 earlier) You asked: My name is Ada.', history: [] });
      const second = await runOnce(where, 'customer-7', 'What is my name?');
      expect(second).toEqual({
        output: '(2 earlier) You asked: What is my name?',
        history: [
          { role: 'user', text: 'My name is Ada.' },
          { role: 'assistant', text: '(0 earlier) You asked: My name is Ada.' },
        ],
      });
      const thread = await readThread('customer-7', { store });
      expect(thread!.messages.map((m) => m.text)).toEqual(['My name is Ada.', '(0 earlier) You asked: My name is Ada.', 'What is my name?', '(2 earlier) You asked: What is my name?']);
      expect(thread!.thread).toMatchObject({ runs: 2, messages: 4 });
      expect(thread!.thread.busy).toBeUndefined();
    });

    it('of two processes that start on one thread at once, exactly one runs; the other is refused with thread_busy', async () => {
      const { where, store } = setup();
      const a = new Runner([...where, 'shared', 'From A', 'hold']);
      const b = new Runner([...where, 'shared', 'From B', 'hold']);
      await Promise.all([a.line('ready'), b.line('ready')]);
      a.say('go');
      b.say('go');
      // One takes the thread and waits in its model; the other is refused without reaching its model.
      const first = await Promise.race([a.line('holding').then(() => a), b.line('holding').then(() => b)]);
      const other = first === a ? b : a;
      expect(await other.result()).toEqual({ refused: 'thread_busy' });
      first.say('release');
      const done = await first.result();
      expect(done).toMatchObject({ output: `(0 earlier) You asked: From ${first === a ? 'A' : 'B'}` });
      expect((await readThread('shared', { store }))!.messages).toHaveLength(2);
    });
  });
}

threadsAcrossProcesses('on a file store', () => {
  const dir = tempDir();
  return { where: ['file', dir, ''], store: fileStore(dir, { fsync: false }) };
});

describe.skipIf(!url)('on Redis', () => {
  threadsAcrossProcesses('redisStore', () => {
    const p = prefix();
    return { where: ['redis', url!, p], store: closeLater(redisStore({ connection: url!, prefix: p })) };
  });
});
