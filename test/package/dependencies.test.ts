import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import configs from '../../tsup.config.js';

const root = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  files: string[];
};
const builds = (Array.isArray(configs) ? configs : [configs]) as Array<{ noExternal?: Array<string | RegExp>; sourcemap?: unknown }>;

describe('package contents', () => {
  it('a package the build bundles is a development dependency, never also a runtime dependency', () => {
    const bundled = new Set(builds.flatMap((b) => (b.noExternal ?? []).filter((n): n is string => typeof n === 'string')));
    expect(bundled.has('p-limit')).toBe(true);
    for (const name of bundled) {
      expect(pkg.dependencies[name], name).toBeUndefined();
    }
    expect(pkg.devDependencies['p-limit']).toBeDefined();
  });

  it('ships no source maps (they would map to src/, which is not in the package)', () => {
    for (const build of builds) expect(build.sourcemap).toBe(false);
    expect(pkg.files).not.toContain('src');
  });
});
