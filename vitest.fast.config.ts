// `npm run test:fast`: the tests that need no external process (no Redis,
// browser, CLI or child process) and no TypeScript compiler run, for the
// edit-test cycle. `npm test` runs the whole suite; test/external.ts lists
// what this leaves out.
import { defineConfig } from 'vitest/config';
import { testConfig } from './vitest.config.js';

export default defineConfig(testConfig({ fast: true }));
