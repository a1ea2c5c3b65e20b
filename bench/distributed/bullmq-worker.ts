// A plain BullMQ worker process for the distributed bench's floors: no
// troupe, a processor that waits `delayMs` (none for 0) and returns a small
// result, `concurrency` jobs at a time. Takes { url, queueName, prefix,
// delayMs, concurrency } as JSON in argv[2]; prints "ready"; closes on
// SIGTERM.
import { Worker } from 'bullmq';

const config = JSON.parse(process.argv[2] ?? '{}') as { url: string; queueName: string; prefix: string; delayMs: number; concurrency: number };
const url = new URL(config.url);
const worker = new Worker(
  config.queueName,
  async () => {
    if (config.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, config.delayMs));
    return { output: 'done' };
  },
  { connection: { host: url.hostname, port: Number(url.port) }, prefix: config.prefix, concurrency: config.concurrency },
);
await worker.waitUntilReady();
process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
process.stdout.write('ready\n');
