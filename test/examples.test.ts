import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redisTarget } from './helpers/redis.js';

// Every example runs offline on the scripted adapter and exits 0.
const dir = join(import.meta.dirname, '..', 'examples');
const examples = readdirSync(dir).filter((f) => f.endsWith('.ts'));
const tsx = join(import.meta.dirname, '..', 'node_modules', 'tsx', 'dist', 'cli.mjs');

// What some examples must print to show what they are about.
const expected: Record<string, RegExp[]> = {
  'support-desk.ts': [/charged twice\s+-> billing/, /log in\s+-> technical/, /contract\?\s+-> legal/],
  'claude-agents.ts': [/lead\s+claude-code\s+model claude-sonnet-4-5\s+tools: Read → read_file resolved; none not\s+sub-agents: code-reviewer, test-writer/, /answered by lead; 5 turns in all/, /└ subagent code-reviewer \[completed\]/, /name: lead\ndescription: "Change lead: splits/],
  'approval-chain.ts': [/APPROVED: PO for 3 laptops/, /\(answered by director\)/],
  'reading-replies.ts': [/steps \(text, repaired\):\n- read the logs/, /reflection complete: false/, /lead actions: \[\{"type":"review","taskId":"t2"/],
  'cli-agent-mcp.ts': [/^troupe ran escalate \{"ticket":"4711"/m, /lookup_ticket: Ticket 4711: the printer on floor 2 is out of toner/],
  'cli-orchestrator.ts': [/the CLI called delegate_to_worker \{"worker":"coder"/, /the CLI called delegate_to_worker \{"worker":"tester"/, /└ worker coder \[completed\]/, /└ worker tester \[completed\]/],
  'reflect-feedback.ts': [
    /adjustment after iteration 1 \(worker-failed\): Worker "Test Writer" failed \(the test runner crashed\)/,
    /Auth fixes \(orchestrator-reflect\): ✅ Goal met \(2\/4\)/,
    /iteration 2: score 0\.95 - Fixed and tested\.$/m,
    /two regression tests cover it\. All done\.$/m,
  ],
  'manager-advisors.ts': [/failed ops: Advisor consultation failed for ops/, /Decided on 3 advisor sections/],
  'observe-run.ts': [/^ {6}invoke_workflow delivery$/m, /invoke_agent builder \[chunk 3\] \(error\)/, /^33 spans:$/m, /report: .*troupe-example-report\.html \(\d+ KB\)/],
  'redis-store.ts': redisTarget().url
    ? [/run shared-1: \d+ events, status completed/, /conflict \(Task list "tasks" was changed elsewhere/, /claimed b/, /a=claimed by worker-\d, b=claimed by worker-\d/]
    : [/No Redis at redis:\/\/127\.0\.0\.1:1/],
};

describe('examples', () => {
  it.each(examples)('%s runs offline', (file) => {
    const out = execFileSync(process.execPath, [tsx, join(dir, file)], {
      encoding: 'utf8',
      // The Redis of the test run, if any (examples that need Redis say so and stop without one).
      env: { ...process.env, TROUPE_ADAPTER: '', REDIS_URL: redisTarget().url ?? 'redis://127.0.0.1:1' },
      timeout: 60_000,
    });
    expect(out.length).toBeGreaterThan(0);
    for (const pattern of expected[file] ?? []) expect(out).toMatch(pattern);
  });

  it('serve/ starts a web service, streams a plan, takes an approval over HTTP and stops', () => {
    const out = execFileSync(process.execPath, [tsx, join(dir, 'serve', 'main.ts'), '--check'], { encoding: 'utf8', env: { ...process.env, TROUPE_ADAPTER: '' }, timeout: 60_000 });
    expect(out).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\/\?token=demo$/m);
    expect(out).toMatch(/^page: 200 with its event stream$/m);
    expect(out).toMatch(/^started run [\w-]+: 201$/m);
    expect(out).toMatch(/^chunk "Write RELEASE\.md": Running$/m);
    expect(out).toMatch(/^approval of write_file requested; approved: 200$/m);
    expect(out).toMatch(/^chunk "Write RELEASE\.md": Succeeded$/m);
    expect(out).toMatch(/^run completed after \d+ events: The notes list every change\.$/m);
    expect(out).toMatch(/^files written: RELEASE\.md$/m);
    expect(out).toMatch(/^stopped$/m);
  });
});
