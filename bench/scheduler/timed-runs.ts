/**
 * The timing loop of the overhead workers: warm up, then time `runs` calls
 * of `once` and print the µs per chunk of each, in wall time and in CPU
 * time (user + system of the whole process, so garbage collection counts),
 * as one line of JSON for the parent process.
 */
export async function printTimedRuns(once: () => Promise<unknown>, chunks: number, runs: number, warmUp: number): Promise<void> {
  for (let i = 0; i < warmUp; i++) await once();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const used = process.cpuUsage();
    const start = performance.now();
    await once();
    wall.push(((performance.now() - start) * 1000) / chunks);
    const { user, system } = process.cpuUsage(used);
    cpu.push((user + system) / chunks);
  }
  process.stdout.write(`${JSON.stringify({ wall, cpu })}\n`);
}
