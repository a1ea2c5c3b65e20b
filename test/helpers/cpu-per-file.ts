// `TROUPE_TEST_CPU=<file> npm test`: each test file's CPU time (its worker's
// and that of the processes it started and waited for, from
// /proc/self/stat) and wall time, one tab-separated line per file appended
// to <file>: CPU seconds, the worker's own CPU seconds, wall seconds, path.
// For finding where the suite's time goes (docs/performance.md); Linux only.
import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach } from 'vitest';

const target = process.env.TROUPE_TEST_CPU;
/** CPU seconds of this process and its waited-for children (utime, stime, cutime, cstime). */
const cpu = (): number => {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
};
const own = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
};
let start = { cpu: 0, own: 0, wall: 0 };
let file = '?';
if (target) {
  beforeAll(() => {
    start = { cpu: cpu(), own: own(), wall: Date.now() };
  });
  beforeEach(({ task }) => {
    file = task.file.filepath;
  });
  afterAll(() => {
    appendFileSync(target, `${(cpu() - start.cpu).toFixed(2)}\t${(own() - start.own).toFixed(2)}\t${((Date.now() - start.wall) / 1000).toFixed(2)}\t${file}\n`);
  });
}
