/**
 * `troupe --version`: the version of the installed package, read from its
 * `package.json` (the nearest one named `troupe` above this module, which is
 * `dist/cli.js` when installed and `src/cli/` in a checkout).
 * @module
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The version of troupe, or `undefined` when no `package.json` of troupe is found above `from`. */
export async function troupeVersion(from: string = fileURLToPath(import.meta.url)): Promise<string | undefined> {
  let dir = dirname(from);
  for (;;) {
    const pkg = await readFile(join(dir, 'package.json'), 'utf8').then(parseJson, () => undefined);
    if (pkg?.name === 'troupe' && typeof pkg.version === 'string') return pkg.version;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function parseJson(text: string): { name?: unknown; version?: unknown } | undefined {
  try {
    return JSON.parse(text) as { name?: unknown; version?: unknown };
  } catch {
    return undefined;
  }
}
