import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redisTarget } from '../../helpers/redis.js';

const root = join(import.meta.dirname, '..', '..', '..');
const tsx = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const { url } = redisTarget();

describe.skipIf(!url)('examples/distributed', () => {
  it('runs 30 chunks on three worker processes through Redis and says which worker ran each', { timeout: 90_000 }, () => {
    const out = execFileSync(process.execPath, [tsx, join(root, 'examples', 'distributed', 'index.ts')], {
      encoding: 'utf8',
      env: { ...process.env, TROUPE_ADAPTER: '', REDIS_URL: url! },
      timeout: 80_000,
    });
    const ran = [...out.matchAll(/^chunk +(\d+) ran on (w[123]) /gm)];
    expect(ran.map((m) => Number(m[1])).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(out).toMatch(/^30\/30 chunks completed in \d+ ms on 3 workers \(w1 \d+, w2 \d+, w3 \d+\); 30 model turns/m);
    const per = /\(w1 (\d+), w2 (\d+), w3 (\d+)\)/.exec(out)!.slice(1).map(Number);
    expect(per.reduce((a, b) => a + b)).toBe(30);
  });
});
