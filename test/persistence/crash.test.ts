import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { parseCheckpoint } from '../../src/core/checkpoint.js';
import { fileStore } from '../../src/persistence/file-store.js';
import { z } from 'zod';
import { payloadFor } from '../fixtures/persistence/crash-state.js';

const crashState = z.object({ version: z.number().int().positive(), payload: z.string() });

const fixture = join(import.meta.dirname, '..', 'fixtures', 'persistence', 'crash-writer.ts');

/** Run the writer until it has acknowledged at least one more write, then SIGKILL it after `delayMs`. */
function runAndKill(script: string, dir: string, delayMs: number): Promise<{ acks: number[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acks: number[] = [];
    let out = '';
    let err = '';
    let armed = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const lines = out.split('\n');
      out = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('ack ')) acks.push(Number(line.slice(4)));
      if (acks.length > 0 && !armed) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`writer exited without being killed: ${err}`));
      else resolve({ acks });
    });
  });
}

describe('crash safety of the file store', () => {
  // Twenty child processes, one after another: seconds, more on a loaded machine.
  it('loads a whole, acknowledged (or in-flight) checkpoint after each of 20 SIGKILLs', { timeout: 180_000 }, async () => {
    const work = mkdtempSync(join(tmpdir(), 'troupe-crash-'));
    const script = join(work, 'crash-writer.mjs');
    buildSync({ entryPoints: [fixture], bundle: true, platform: 'node', format: 'esm', target: 'node20', minify: true, outfile: script, logLevel: 'error' });
    const dir = join(work, 'store');
    let lastAck = 0;
    for (let round = 0; round < 20; round++) {
      const { acks } = await runAndKill(script, dir, Math.floor(Math.random() * 25));
      lastAck = Math.max(lastAck, ...acks);
      const raw = await fileStore(dir).get('runs/crash/checkpoint');
      expect(raw).toBeDefined();
      const { version, payload } = parseCheckpoint(raw, { key: 'runs/crash/checkpoint', runId: 'crash' }, { kind: 'crash-test', version: 1, state: crashState }).state;
      // Nothing acknowledged is lost; at most the write in flight also landed.
      expect([lastAck, lastAck + 1]).toContain(version);
      expect(payload).toBe(payloadFor(version));
      lastAck = version;
    }
    expect(await fileStore(dir).list('')).toEqual(['runs/crash/checkpoint']);
    expect(readdirSync(join(dir, 'runs', 'crash')).filter((f) => !f.startsWith('.tmp-'))).toEqual(['checkpoint.json']);
  });
});
