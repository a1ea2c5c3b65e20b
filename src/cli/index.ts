/**
 * The `troupe` executable.
 * @module
 */
import { main } from './main.js';

// The first Ctrl-C cancels the run cleanly; a second one exits at once.
const controller = new AbortController();
process.once('SIGINT', () => {
  controller.abort();
  process.once('SIGINT', () => process.exit(130));
});
// SIGTERM stops as the first Ctrl-C does (a server closes its sessions, a run is cancelled).
process.once('SIGTERM', () => controller.abort());

// Output piped into a reader that stops early (`troupe squad show . | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

main(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  signal: controller.signal,
  progress: process.stderr,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
