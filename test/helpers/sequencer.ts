// The order in which the test files start: the longest first, so that on
// a few cores no long file starts last and runs alone at the end (longest
// processing time first). Vitest orders by its cache of earlier runs, which
// a fresh clone (CI) does not have; this order needs none: the files known
// to be long (`longest`, measured with `npx vitest run --reporter=verbose`),
// then the others by size, larger first.
import { statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The files that take longest on two cores, longest first (each 20 s or more). */
export const longest = [
  'test/ui/planning.browser.test.ts',
  'test/adapters/process-cli-copilot.test.ts',
  'test/ui/chat.browser.test.ts',
  'test/examples.test.ts',
  'test/adapters/process-cli-claude.test.ts',
  'test/integrations/bullmq/crash.test.ts',
  'test/adapters/process-cli-codex.test.ts',
  'test/adapters/process-mcp.test.ts',
  'test/compiler.test.ts',
  'test/workspaces/conformance.test.ts',
  'test/adapters/process.test.ts',
  'test/workspaces/git-worktree.test.ts',
  'test/plan/model/graph-scale.test.ts',
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const rank = (spec: TestSpecification) => {
      const at = longest.indexOf(relative(root, spec.moduleId).split('\\').join('/'));
      return at < 0 ? longest.length : at;
    };
    const size = (spec: TestSpecification) => {
      try {
        return statSync(spec.moduleId).size;
      } catch {
        return 0;
      }
    };
    return [...files].sort((a, b) => rank(a) - rank(b) || size(b) - size(a));
  }
}
