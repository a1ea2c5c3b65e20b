/**
 * `npm run bench`: runs every `bench/*.bench.ts` module (each exports a
 * default async function that prints its own table). Pass names to run only
 * some: `npm run bench -- scheduler`.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = import.meta.dirname;
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

if (files.length === 0) console.log('No benchmarks matched.');
for (const file of files) {
  console.log(`\n## ${file}\n`);
  const mod = (await import(pathToFileURL(join(dir, file)).href)) as { default: () => Promise<void> };
  await mod.default();
}
