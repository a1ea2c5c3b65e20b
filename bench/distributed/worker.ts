// A worker process of the distributed bench: takes jobs from the queue given
// in argv[2] (JSON) and runs them on the scripted adapter, each model turn
// taking `delayMs`. Prints "ready"; prints "aborted <ms since the epoch>" when a
// job is cancelled under it; closes on SIGTERM.
import { startWorker } from '../../src/integrations/bullmq/index.js';
import { scriptedAdapter } from '../../src/testing/index.js';

const config = JSON.parse(process.argv[2] ?? '{}') as { url: string; queueName: string; prefix: string; concurrency: number; delayMs: number; name: string };
const adapter = scriptedAdapter({ fallback: config.delayMs > 0 ? { text: 'done', delayMs: config.delayMs } : 'done' });
const worker = await startWorker({
  connection: config.url,
  queueName: config.queueName,
  prefix: config.prefix,
  name: config.name,
  adapter,
  concurrency: config.concurrency,
  handleSignals: true,
});
worker.events.on('job.failed', (e) => {
  if (e.cancelled) process.stdout.write(`aborted ${Date.now()}\n`);
});
process.stdout.write('ready\n');
