// Prints the public names of every entry point (scripts/entry-points.ts):
// `npm run api:names` prints a count per entry point, `-- --list` every name.
// `--max-kernel <n>` fails when troupe/kernel exports more than n names (CI).
import { publicApi } from './public-api.js';

const list = process.argv.includes('--list');
const maxAt = process.argv.indexOf('--max-kernel');
const { entries } = publicApi();
let total = 0;
const distinct = new Set<string>();
for (const [entry, symbols] of entries) {
  const exported = symbols.map((s) => s.getName());
  total += exported.length;
  for (const n of exported) distinct.add(n);
  console.log(`${entry.padEnd(28)} ${String(exported.length).padStart(4)}${list ? `  ${exported.join(', ')}` : ''}`);
}
console.log(`${'all entry points'.padEnd(28)} ${String(total).padStart(4)} (${distinct.size} distinct)`);
if (maxAt > 0) {
  const max = Number(process.argv[maxAt + 1]);
  const kernel = entries.get('troupe/kernel')?.length ?? 0;
  if (kernel > max) {
    console.error(`troupe/kernel exports ${kernel} names; at most ${max} are allowed`);
    process.exitCode = 1;
  }
}
