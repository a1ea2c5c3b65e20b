// Poll a condition on real time, for what is watched from outside (a
// process, a file) where there is no clock to drive. The deadline only
// matters when the condition never holds: it is long, so that a loaded
// machine is slow rather than wrong.

/** Resolve once `check()` holds (polled every 25 ms); reject after `timeoutMs` (default 30 s) naming `what`. */
export async function eventually(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (check()) return;
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
