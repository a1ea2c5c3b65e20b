// vitest global setup: find the real CLIs of the CLI tests once. Without
// them those tests are skipped with one line saying how to enable them,
// unless TROUPE_REQUIRE_CLIS=1 (CI), which makes a missing CLI an error.
import type { TestProject } from 'vitest/node';
import { ENABLE_CLIS, findClis } from './cli-rigs.js';

export default function setup(project: TestProject): void {
  const clis = findClis();
  const missing = Object.entries(clis).filter(([, cli]) => cli === null).map(([name]) => name);
  if (missing.length > 0 && process.env.TROUPE_REQUIRE_CLIS === '1') {
    throw new Error(`TROUPE_REQUIRE_CLIS=1 but the CLI tests of ${missing.join(', ')} would be skipped: ${ENABLE_CLIS}`);
  }
  if (missing.length > 0) console.warn(`\n⚠ Real-CLI tests of ${missing.join(', ')} skipped (not installed): ${ENABLE_CLIS}.\n`);
  project.provide('clis', clis);
}
