import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Every example runs offline on the scripted adapter and exits 0.
const dir = join(import.meta.dirname, '..', 'examples');
const examples = readdirSync(dir).filter((f) => f.endsWith('.ts'));
const tsx = join(import.meta.dirname, '..', 'node_modules', 'tsx', 'dist', 'cli.mjs');

// What some examples must print to show what they are about.
const expected: Record<string, RegExp[]> = {
  'support-desk.ts': [/charged twice\s+-> billing/, /log in\s+-> technical/, /contract\?\s+-> legal/],
  'approval-chain.ts': [/APPROVED: PO for 3 laptops/, /\(answered by director\)/],
  'manager-advisors.ts': [/failed ops: Advisor consultation failed for ops/, /Decided on 3 advisor sections/],
};

describe('examples', () => {
  it.each(examples)('%s runs offline', (file) => {
    const out = execFileSync(process.execPath, [tsx, join(dir, file)], {
      encoding: 'utf8',
      env: { ...process.env, TROUPE_ADAPTER: '' },
      timeout: 60_000,
    });
    expect(out.length).toBeGreaterThan(0);
    for (const pattern of expected[file] ?? []) expect(out).toMatch(pattern);
  });
});
