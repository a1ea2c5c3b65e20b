/**
 * An orchestrator-reflect code-review loop, offline on the scripted adapter.
 * A lead reviewer assigns the diff to a security and a style reviewer, merges
 * their findings, and a judge scores the review. The first review misses the
 * tests; the judge says so; the second iteration meets the goal.
 *
 *   npx tsx examples/code-review-loop.ts
 */
import { agent, orchestrate, run } from 'troupe';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';

const DIFF = `diff --git a/src/login.ts b/src/login.ts
+export async function login(user: string, password: string) {
+  const row = await db.query("SELECT * FROM users WHERE name = '" + user + "'");
+  return row.password == password;
+}`;

// A real model when the environment names one (TROUPE_ADAPTER, see troupe/adapters/env), else the
// scripted model: each agent's replies in order (a function sees the prompt).
const live = adapterFromEnv();
const adapter = live ?? scriptedAdapter({
  replies: {
    lead: [
      '@worker:security\nReview the diff for injection and credential handling.\n@end\n@worker:style\nReview naming, equality and error handling.\n@end',
      (r) => `Review (round 1): ${r.text.includes('SQL injection') ? 'SQL injection in the query; ' : ''}loose equality on passwords.`,
      '@worker:security\nCheck how passwords are stored and compared; suggest tests.\n@end',
      (r) =>
        `Review (round 2): SQL injection (use a parameterised query); plain-text passwords (hash with bcrypt, compare in constant time); ` +
        `${r.text.includes('test') ? 'add tests for both.' : ''}\n[[GROUP_REFLECT_COMPLETE]]`,
    ],
    security: [
      'SQL injection: the user name is concatenated into the query.',
      'Passwords are stored in plain text and compared with ==; add a test for a wrong password and for a quote in the user name.',
    ],
    style: ['Use === instead of ==; handle a missing row.'],
    judge: ['SCORE: 0.6\nRATIONALE: Finds the injection but says nothing about password storage or tests.', 'SCORE: 0.92\nRATIONALE: Complete and actionable.'],
  },
});

const review = orchestrate({
  name: 'code-review',
  mode: 'orchestrator-reflect',
  lead: agent({ name: 'lead', system: 'You lead a code review and merge the findings.' }),
  workers: [
    agent({ name: 'security', system: 'You review code for security problems.' }),
    agent({ name: 'style', system: 'You review code for clarity and correctness.' }),
  ],
  evaluator: agent({ name: 'judge', system: 'You score code reviews.' }),
  sharedContext: `## Diff\n${DIFF}`,
  maxIterations: 4,
  goalScore: 0.9,
});

const result = await run(review, 'Review this pull request before it is merged.', { adapter });
console.log(result.summary);
for (const e of result.evaluations) console.log(`iteration ${e.iteration}: score ${e.score} (${e.trend}) - ${e.rationale}`);
console.log(`\n${result.output}`);
// The scripted run meets the goal in the second iteration; a real model may take another path.
if (!live && (!result.goalMet || result.iterations !== 2)) process.exit(1);
