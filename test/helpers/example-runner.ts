// Runs examples one after another in this one process, as `tsx <example>`
// would, and writes what each printed, its exit code and any handle it left
// open to the JSON file named by the first argument. The second names a JSON
// file of the runs to make (`ExampleRun[]`). The examples test
// (test/examples.test.ts) starts two of these instead of one process per
// example: the sources load once per runner, which makes the examples' part
// of the suite about eight times cheaper in CPU.
//
// Each example runs with its own process.argv, process.exitCode and the
// variables its run adds to process.env; `process.exit(n)` ends the example
// (not the runner) with code n. An example run twice is loaded afresh the
// second time. An example must leave nothing running: a socket, server, child
// process or timer still open after it finished fails it, as it would keep its
// own process alive.
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** One run of an example. */
export interface ExampleRun {
  /** What the run is called in the results (the file's name when it runs once, as a user starts it). */
  id: string;
  file: string;
  /** Its arguments (process.argv after the file). */
  args?: string[];
  /** Variables set in process.env for this run alone. */
  env?: Record<string, string>;
}

/** What one example did. */
export interface ExampleResult {
  id: string;
  file: string;
  code: number;
  stdout: string;
  stderr: string;
  /** Handles the example left open (from `process.getActiveResourcesInfo()`), if any. */
  leaked: string[];
  ms: number;
}

class Exit extends Error {
  constructor(readonly code: number) {
    super(`process.exit(${code})`);
  }
}

const [resultFile, runsFile] = process.argv.slice(2);
const runs = JSON.parse(readFileSync(runsFile!, 'utf8')) as ExampleRun[];
const loaded = new Map<string, number>();
const realExit = process.exit.bind(process);
const realArgv = process.argv;
const writes = { stdout: process.stdout.write.bind(process.stdout), stderr: process.stderr.write.bind(process.stderr) };
const results: ExampleResult[] = [];
/** Resources every example may find open: this runner's own. */
const handles = () => process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap' && r !== 'PipeWrap');

/** Counts of each resource kind, as `{ Timeout: 2 }`. */
function count(list: string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const r of list) map.set(r, (map.get(r) ?? 0) + 1);
  return map;
}

for (const { id, file, args = [], env = {} } of runs) {
  const out = { stdout: '', stderr: '' };
  const capture = (stream: 'stdout' | 'stderr') => (chunk: string | Uint8Array, ...rest: unknown[]) => {
    out[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  };
  const before = count(handles());
  const started = performance.now();
  let code = 0;
  let exited = false;
  process.stdout.write = capture('stdout') as typeof process.stdout.write;
  process.stderr.write = capture('stderr') as typeof process.stderr.write;
  process.argv = [realArgv[0]!, file, ...args];
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  Object.assign(process.env, env);
  process.exitCode = undefined;
  process.exit = ((c?: number | string | null) => {
    throw new Exit(Number(c ?? process.exitCode ?? 0));
  }) as typeof process.exit;
  try {
    // A second run of a file gets a module of its own (its imports are shared).
    const times = loaded.get(file) ?? 0;
    loaded.set(file, times + 1);
    await import(`${pathToFileURL(file).href}${times ? `?run=${times}` : ''}`);
    code = Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof Exit) {
      code = error.code;
      exited = true;
    } else {
      code = 1;
      out.stderr += `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`;
    }
  }
  // Let closing handles finish closing (a server's close callback, a child's exit) before counting.
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 20));
  process.stdout.write = writes.stdout as typeof process.stdout.write;
  process.stderr.write = writes.stderr as typeof process.stderr.write;
  process.exit = realExit;
  process.argv = realArgv;
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  process.exitCode = undefined;
  const after = count(handles());
  // After process.exit(), what is still open would have ended with the process.
  const leaked: string[] = [];
  if (!exited) for (const [kind, n] of after) for (let i = before.get(kind) ?? 0; i < n; i++) leaked.push(kind);
  results.push({ id, file, code, stdout: out.stdout, stderr: out.stderr, leaked, ms: Math.round(performance.now() - started) });
}

writeFileSync(resultFile!, JSON.stringify(results));
// Whatever an example left behind does not keep the runner alive: its results are written.
realExit(0);
