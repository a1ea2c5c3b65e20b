// The bundled elements in src/ui/bundle.ts are what their sources build to,
// within the size budget (scripts/build-ui.mjs --check).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('the bundled elements', () => {
  it('are what src/ui/elements/ builds to, at most 150 KB gzipped', () => {
    const root = join(import.meta.dirname, '..', '..');
    const out = execFileSync(process.execPath, [join(root, 'scripts', 'build-ui.mjs'), '--check'], { encoding: 'utf8' });
    expect(out).toMatch(/team interface bundle up to date \(\d+\.\d KB, (\d+)\.\d KB gzipped\)/);
    const gzipped = Number(/(\d+\.\d) KB gzipped/.exec(out)![1]);
    expect(gzipped).toBeLessThanOrEqual(150);
  });
});
