// A worker process of the distributed bench: takes jobs from the queue given
// in argv[2] (JSON) and runs them on the scripted adapter, each model turn
// taking `delayMs`, with the troupe sources of `src` (this tree's, or a
// baseline's). Prints "ready"; prints "aborted <ms since the epoch>" when a
// job is cancelled under it; closes on SIGTERM.
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const config = JSON.parse(process.argv[2] ?? '{}') as { src?: string; url: string; queueName: string; prefix: string; parallel: Record<string, number>; delayMs: number; name: string };
const src = config.src ?? resolve(import.meta.dirname, '..', '..', 'src');
const { startWorker } = (await import(pathToFileURL(join(src, 'integrations', 'bullmq', 'index.ts')).href)) as typeof import('../../src/integrations/bullmq/index.js');
const { scriptedAdapter } = (await import(pathToFileURL(join(src, 'testing', 'index.ts')).href)) as typeof import('../../src/testing/index.js');
const adapter = scriptedAdapter({ fallback: config.delayMs > 0 ? { text: 'done', delayMs: config.delayMs } : 'done' });
const worker = await startWorker({
  connection: config.url,
  queueName: config.queueName,
  prefix: config.prefix,
  name: config.name,
  adapter,
  // `maxParallel`, or `concurrency` in a baseline from before the rename.
  ...config.parallel,
  handleSignals: true,
} as Parameters<typeof startWorker>[0]);
worker.events.on('job.failed', (e) => {
  if (e.cancelled) process.stdout.write(`aborted ${Date.now()}\n`);
});
process.stdout.write('ready\n');
