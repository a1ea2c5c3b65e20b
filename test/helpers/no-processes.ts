// `npm run test:fast` only (vitest.fast.config.ts): starting a child process
// fails the test with a message that names the list to put its file in.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

const refuse = (name: string) => () => {
  throw new Error(`child_process.${name}: this test starts a process, which test:fast does not run. Add its file to \`processes\` in test/external.ts.`);
};
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  (childProcess as unknown as Record<string, unknown>)[name] = refuse(name);
}
syncBuiltinESMExports();
