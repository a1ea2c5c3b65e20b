import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeChatServer } from './helpers/chat-server.js';
import type { ExampleResult, ExampleRun } from './helpers/example-runner.js';
import { redisTarget } from './helpers/redis.js';

// Every example runs offline on the scripted adapter, exits 0, leaves nothing running and prints what it is about.
// They run in two runner processes (test/helpers/example-runner.ts), each loading the sources once; one example
// also runs as its own process below, as a user would start it. Two more runs go to the runners: one example on
// a model named by the environment, and the web service's self-check.
const dir = join(import.meta.dirname, '..', 'examples');
const examples = readdirSync(dir).filter((f) => f.endsWith('.ts'));
const tsx = join(import.meta.dirname, '..', 'node_modules', 'tsx', 'dist', 'cli.mjs');

// What each example must print to show what it is about (an example without an entry fails).
const expected: Record<string, RegExp[]> = {
  'a2a-collaboration.ts': [
    /^remote agent: review-panel \(Reviews a plan or a change: security and style reviewers, one verdict\), skills: review-panel, over JSONRPC 1\.0$/m,
    /^ {2}\(remote\) security: Risk: the migration drops the `legacy_tokens` table/m,
    /^ {2}review-panel task completed$/m,
    /^ {4}└ a2a review-panel \[completed\]/m,
    /^ {8}└ agent security \[completed\]/m,
    /^3\. Drop `legacy_tokens` in 2\.1\.$/m,
  ],
  'claude-code-mcp.ts': [
    /^review-panel: Verdict: request changes\. Resolve `file` with path\.basename/m,
    /^troupe ran review-panel \+ advisors on: PR 42: add `GET \/export/m,
    /^ {2}security: `file` is joined to \.\/reports unchecked/m,
  ],
  'support-desk.ts': [/charged twice\s+-> billing/, /log in\s+-> technical/, /contract\?\s+-> legal/],
  'claude-agents.ts': [/lead\s+claude-code\s+model claude-sonnet-4-5\s+tools: Read → read_file resolved; none not\s+sub-agents: code-reviewer, test-writer/, /answered by lead; 5 turns in all/, /└ subagent code-reviewer \[completed\]/, /name: lead\ndescription: "Change lead: splits/],
  'budgets.ts': [/^budget research exhausted: totalTokens reached \(max 2000\)$/m, /^compacted lead: \d+ -> \d+ tokens \(drop; 1 worker results/m, /^budget launch exhausted: costUsd reached \(max 0\.1\)$/m, /^status: budget-exhausted$/m, /^answer so far: Draft \d+: pricing page/m],
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
  'guardrails.ts': [/guardrail refund-limit \(tool\): refuse\nguardrail refund-limit \(tool\): allow/, /answer by writer: Dear customer, we refunded 40 EUR/, /stopped by on-topic at the input stage: homework help/],
  'edited-plan-conflict.ts': [
    /^approved after editing: Raise the timeout \| Raise the retries$/m,
    /^conflict: chunk 1 in config\.txt with chunk 0 -> retrying$/m,
    /^the retry was told: Attempt 1 of this chunk could not be merged: it conflicts in config\.txt\.$/m,
    /^report: chunk 1 conflicted with chunk 0 in config\.txt, resolved$/m,
    /^config\.txt now: limits = timeout 30s, retries 5$/m,
  ],
  'manager-advisors.ts': [/failed ops: Advisor consultation failed for ops/, /Decided on 3 advisor sections/],
  'observe-run.ts': [/^ {6}invoke_workflow delivery$/m, /invoke_agent builder \[chunk 3\] \(error\)/, /^33 spans:$/m, /report: .*troupe-example-report\.html \(\d+ KB\)/],
  'code-review-loop.ts': [/^✅ Goal met \(2\/4\)/m, /^iteration 1: score 0\.6 \(stable\)/m, /^iteration 2: score 0\.92 \(improving\) - Complete and actionable\.$/m, /^Review \(round 2\): SQL injection/m],
  'custom-http-adapter.ts': [/^You said: hello over HTTP/m, /inputTokens: 15,\s+outputTokens: 25/],
  'demo.ts': [
    /Approved\. Hi Ada, invoice INV-77 charged you twice; we have refunded 12\.50\./,
    /^Terminal agent: approval {3}status: completed/m,
    /└ handoff billing -> approval \[completed\]/,
    /router\.selected {5}front-desk -> billing \(tool: a duplicate charge\)/,
  ],
  'lead-coordination.ts': [
    /lead: worker-stuck export ben no answer to the status check within 1000 ms/,
    /lead: task-reassigned export ana from ben/,
    /^ {2}export {5}done {5}ana$/m,
    /^ {2}docs {7}done {5}cy$/m,
    /^Synthesis: Done: dark mode, settings page, CSV export\./m,
  ],
  'memory-leaks.ts': [/^stages: \[\[0,1\],\[2\]\]$/m, /^critical path by estimate: 0 -> 2 \(5 min\)$/m, /^phase: aggregating -> completed$/m, /"total":3,"completed":3,"failed":0/],
  'plan-template.ts': [
    /^run 2: Find and fix the bug in session on small -> Analyse session: completed, Fix session: completed$/m,
    /^refused before running: .*path "src\/\.\.\/etc\/" leaves the workspace$/m,
    /^learned estimates: CodeAnalysis 3000 ms, Implementation 2000 ms$/m,
    /^Implementation model: small \(2 of 2 chunks completed \(score 75%, best 75%\), \$0\.0010 a chunk\)$/m,
    /^- Implementation: 4 chunks, 100% succeeded, 1\.0 attempts, 2\.0 s each$/m,
    /^run 5 with what was learned: The cache never evicts\. Fixed on small\.$/m,
  ],
  'persistence.ts': [/^answer: Tides rise and fall/m, /^replayed: same answer$/m, /^model calls: 2 live, 2 turns served from the log$/m],
  'quickstart.ts': [/^Your order A-1042 is on its way \(DHL\)\.$/m, /^ {2}└ agent support \[completed\] .* turns=2$/m],
  'resume-loop.ts': [/^first half: iterations 1, 2 -> ⏹️ Cancelled \(2\/4\)/m, /^second half: iterations 3, 4 -> ✅ Goal met \(4\/4\)/m, /^scores: 0\.3, 0\.6, 0\.7, 0\.95$/m, /^answer: Login form, version 4\.$/m],
  'replan-on-message.ts': [
    /^message from chunk 0 to Implementation: GET \/orders is paginated/m,
    /^plan change 1 \(the orders API is paginated\) after 0 chunks completed$/m,
    /^plan now: 0 Audit the orders API \| 2 Test the orders client \(after 11\) \| 12 Document pagination \(after 11\) \| 10 Write the orders client \(after 0\) \| 11 Add cursor pagination to the client \(after 0, 10\)$/m,
    /^10\. Write the orders client: completed - Done: Write the orders client \(knows about the cursor\)\.$/m,
    /^status: completed$/m,
  ],
  'resume-plan.ts': [/^first half ran chunks: 0, 1, 2$/m, /^second half ran chunks: 3, 4, 5$/m, /^plan completed: 0 completed, 1 completed, 2 completed, 3 completed, 4 completed, 5 completed$/m],
  'shared-pool.ts': [
    /^ 0\.5 s  slots: web 2, api 1 +finished: -$/m,
    /^ 2\.5 s  slots: web 1, api 1, docs 1 +finished: web 2, api 1, web 3$/m,
    /^Refresh the web app: completed, 6\/6 chunks$/m,
    /^Version the API: completed, 4\/4 chunks$/m,
    /^Update the docs: completed, 3\/3 chunks$/m,
    /^worker time: web 6\.0 s, api 4\.0 s, docs 3\.0 s$/m,
  ],
  'review-panel.ts': [/vote: security votes to conclude \(round 2\)/, /^Status: completed \(lead-decided\) after 2 rounds/m, /^lead: Verdict: request changes\./m],
  'squad.ts': [/^Squad Team \(orchestrator-reflect\), read from /m, /'Ripley' +│ 'Lead'/, /^presets: code-review \[builtin\].*Squad Team \[repo\]$/m, /^✅ Goal met \(2\/5\)/m],
  'what-if-review.ts': [
    /^what-if of run review-7 as review-7-strict: prompt of style$/m,
    /^model calls +3 +\| 3: 1 recorded, 2 new, 0 to restore context$/m,
    /^ +Approve\. +\| Request changes: rename `x` and `tmp`\.$/m,
    /^sessions opened on the model: 2 \(lead, style\); answered from the recording: security$/m,
  ],
  'team-chat.ts': [
    /^listening on http:\/\/127\.0\.0\.1:\d+\/$/m,
    /^page: 200, with the team chat$/m,
    /^script: 200, text\/javascript; charset=utf-8, \d+ KB$/m,
    /^plan of 1 chunk\(s\): approved \(200\)$/m,
    /^phase: executing$/m,
    /^answer: The release notes are ready\.$/m,
    /^stopped$/m,
  ],
  'worktrees.ts': [/^docs on troupe\/greeter\/docs: Documented greet\(\)\.$/m, /^merge troupe\/greeter\/coder: merged$/m, /^merge troupe\/greeter\/docs: merged$/m, /^src\/greet\.js$/m],
  'memory.ts': [
    /^memory store: 2\. Yes, Ada: the replacement for A-1042 shipped today\.$/m,
    /^memory store: 3\. You are Ada; we spoke about order A-1042 \(2 earlier exchanges in this conversation\)\.$/m,
    /^memory store: thread customer-42 has 6 messages; working memory \(revision 1\): \{"name":"Ada","orders":\["A-1042: bent wheel"\]\}$/m,
    redisTarget().url ? /^redis: thread customer-42 has 6 messages; working memory \(revision 1\)/m : /^redis: skipped \(no Redis at redis:\/\/127\.0\.0\.1:1/m,
    /^http: 3\. \(201\) You are Ada; we spoke about order A-1042 \(2 earlier exchanges in this conversation\)\.$/m,
    /^http: GET \/threads\/customer-42: 3 runs, 6 messages$/m,
  ],
  'redis-store.ts': redisTarget().url
    ? [/run shared-1: \d+ events, status completed/, /conflict \(Task list "tasks" was changed elsewhere/, /claimed b/, /a=claimed by worker-\d, b=claimed by worker-\d/]
    : [/No Redis at redis:\/\/127\.0\.0\.1:1/],
};

describe('examples', () => {
  it('each has what it must print', () => {
    expect(examples.filter((file) => !expected[file]?.length)).toEqual([]);
  });

  const results = new Map<string, ExampleResult>();
  const work = mkdtempSync(join(tmpdir(), 'troupe-examples-'));
  // The model server of the run that takes its adapter from the environment.
  const server = new FakeChatServer();
  server.handler = (request) => ({ text: `The server answered ${String(request.body.messages.at(-1)?.['role'])}.`, usage: { prompt_tokens: 3, completion_tokens: 4 } });
  const ON_SERVER = 'persistence.ts on an OpenAI-compatible server';
  const SERVE = 'serve/main.ts --check';
  beforeAll(async () => {
    const url = await server.start();
    const runner = join(import.meta.dirname, 'helpers', 'example-runner.ts');
    // The Redis of the test run, if any (examples that need Redis say so and stop without one).
    const env = { ...process.env, TROUPE_ADAPTER: '', REDIS_URL: redisTarget().url ?? 'redis://127.0.0.1:1' };
    const runs: ExampleRun[] = [
      ...examples.map((file) => ({ id: file, file: join(dir, file) })),
      { id: ON_SERVER, file: join(dir, 'persistence.ts'), env: { TROUPE_ADAPTER: 'openai', OPENAI_BASE_URL: url, OPENAI_API_KEY: 'test-key', TROUPE_MODEL: 'llama3.2' } },
      { id: SERVE, file: join(dir, 'serve', 'main.ts'), args: ['--check'] },
    ];
    const halves = [runs.filter((_, i) => i % 2 === 0), runs.filter((_, i) => i % 2 === 1)];
    await Promise.all(
      halves.map(async (half, i) => {
        const out = join(work, `results-${i}.json`);
        const jobs = join(work, `runs-${i}.json`);
        writeFileSync(jobs, JSON.stringify(half));
        await new Promise<void>((resolve, reject) =>
          execFile(process.execPath, [tsx, runner, out, jobs], { encoding: 'utf8', env, timeout: 300_000 }, (error, _stdout, stderr) =>
            error ? reject(new Error(`the example runner failed: ${error.message}\n${stderr}`)) : resolve(),
          ),
        );
        for (const result of JSON.parse(readFileSync(out, 'utf8')) as ExampleResult[]) results.set(result.id, result);
      }),
    );
    // Each runner runs some twenty examples: minutes on a machine loaded many times over, not red.
  }, 330_000);
  afterAll(async () => {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  });

  /** The run `id` ended well, leaving nothing open; its output. */
  function succeeded(id: string): string {
    const result = results.get(id);
    expect(result, `${id} did not run`).toBeDefined();
    expect({ code: result!.code, stderr: result!.code === 0 ? '' : result!.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result!.leaked, `${id} left handles open`).toEqual([]);
    return result!.stdout;
  }

  it.each(examples)('%s runs offline', (file) => {
    const stdout = succeeded(file);
    for (const pattern of expected[file]!) expect(stdout).toMatch(pattern);
  });

  it('runs as its own process, as a user starts it (npx tsx examples/quickstart.ts)', () => {
    const out = execFileSync(process.execPath, [tsx, join(dir, 'quickstart.ts')], { encoding: 'utf8', env: { ...process.env, TROUPE_ADAPTER: '' }, timeout: 60_000 });
    for (const pattern of expected['quickstart.ts']!) expect(out).toMatch(pattern);
  });

  // Examples whose adapter is their subject: one writes its own, one runs a CLI through the process adapter.
  const ownAdapter = ['custom-http-adapter.ts', 'cli-agent-mcp.ts'];

  it('each takes a real adapter from the environment when one is named, else the scripted one', () => {
    const fixed = examples.filter((file) => !ownAdapter.includes(file) && !/\badapterFromEnv\(\)/.test(readFileSync(join(dir, file), 'utf8')));
    expect(fixed).toEqual([]);
  });

  it('an example runs on the model the environment names (an OpenAI-compatible server on 127.0.0.1)', () => {
    const out = succeeded(ON_SERVER);
    expect(out).toMatch(/^answer: The server answered user\.$/m);
    expect(out).toMatch(/^replayed: same answer$/m);
    expect(server.requests.length).toBe(2);
    expect(server.requests.every((r) => r.body['model'] === 'llama3.2')).toBe(true);
  });

  it('serve/ starts a web service, streams a plan, takes an approval over HTTP and stops', () => {
    const out = succeeded(SERVE);
    expect(out).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\/\?token=demo$/m);
    expect(out).toMatch(/^page: 200 with its event stream$/m);
    expect(out).toMatch(/^started run [\w-]+: 201$/m);
    expect(out).toMatch(/^chunk "Write RELEASE\.md": running$/m);
    expect(out).toMatch(/^approval of write_file requested; approved: 200$/m);
    expect(out).toMatch(/^chunk "Write RELEASE\.md": completed$/m);
    expect(out).toMatch(/^run completed after \d+ events: The notes list every change\.$/m);
    expect(out).toMatch(/^files written: RELEASE\.md$/m);
    expect(out).toMatch(/^stopped$/m);
  });
});
