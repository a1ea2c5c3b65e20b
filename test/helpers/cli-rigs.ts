// The real coding-agent CLIs of the CLI tests: installed into test/cli-rigs
// by `npm run install:cli-rigs` (CI does it), never by the library's own
// install. No vitest import here: the global setup (`cli-rigs-setup.ts`)
// uses it too.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** One CLI found in the rig. */
export interface RigCli {
  /** The executable. */
  path: string;
  /** What `--version` printed. */
  version: string;
}

/** The CLIs the global setup found; a missing one is null (its tests are skipped). */
export interface CliRigs {
  claude: RigCli | null;
  codex: RigCli | null;
  copilot: RigCli | null;
}

declare module 'vitest' {
  export interface ProvidedContext {
    clis: CliRigs;
  }
}

/** Where the rig's package.json is. */
export const CLI_RIGS_DIR = join(import.meta.dirname, '..', 'cli-rigs');

/**
 * Where the Copilot CLI keeps the package its binary unpacks at its first
 * start (`<cache>/pkg/<platform>/<version>`): beside the rig's install, so
 * a test with a fresh HOME does not unpack it again (a second of CPU a start).
 */
export const COPILOT_CACHE_HOME = join(CLI_RIGS_DIR, 'node_modules', '.cache', 'copilot');

/** How to enable the CLI tests, for the skip line. */
export const ENABLE_CLIS = '`npm run install:cli-rigs` installs @anthropic-ai/claude-code, @openai/codex and @github/copilot into test/cli-rigs';

function find(name: string): RigCli | null {
  const path = join(CLI_RIGS_DIR, 'node_modules', '.bin', name);
  if (!existsSync(path)) return null;
  try {
    const printed = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'] });
    const version = printed.trim().split('\n')[0] ?? '';
    return { path, version };
  } catch {
    return null;
  }
}

/** The CLIs installed in the rig that run. */
export function findClis(): CliRigs {
  return { claude: find('claude'), codex: find('codex'), copilot: find('copilot') };
}
