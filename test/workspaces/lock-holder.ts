// Child process for the cross-process test: holds the file-locking lock on a
// directory until told to release it on stdin.
import { createInterface } from 'node:readline';
import { fileLocking } from '../../src/workspaces/file-locking.js';

const [dir, lockDir] = process.argv.slice(2) as [string, string];
const strategy = fileLocking({ lockDir, pollMs: 20 });
const ws = await strategy.prepare({ id: 'child', title: 'Child', workingScope: ['src/**'], baseDir: dir });
process.stdout.write('locked\n');
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line.trim() === 'release') break;
}
await strategy.cleanup(ws);
process.stdout.write('released\n');
lines.close();
