/**
 * The second process of `examples/a2a-collaboration.ts`: a review panel (a
 * lead with a security and a style reviewer as advisors) served as an A2A
 * agent on 127.0.0.1, behind a bearer token. It prints `listening <url>`
 * once it serves, and stops on SIGTERM (its running tasks cancelled).
 *
 *   A2A_TOKEN=secret npx tsx examples/a2a/reviewers.ts
 */
import type { AddressInfo } from 'node:net';
import { advisors, agent } from 'troupe';
import { memoryStore } from 'troupe/persistence';
import { adapterFromEnv } from 'troupe/adapters/env';
import { scriptedAdapter } from 'troupe/testing';
import { a2aServer } from 'troupe/a2a';
import { createNodeServer } from 'troupe/http';

const token = process.env['A2A_TOKEN'] ?? 'secret';

// A real model when the environment names one; else each reviewer's scripted answer.
const adapter = adapterFromEnv() ?? scriptedAdapter({
  replies: {
    security: ['Risk: the migration drops the `legacy_tokens` table while 1.x clients still send them. Keep it one more release.'],
    style: ['The changelog mixes tenses; write every entry in the present.'],
    'panel-lead': ['Review verdict: ship 2.0 in two steps. Keep `legacy_tokens` until 2.1, and fix the changelog first.'],
  },
  latencyMs: 20,
});

const panel = advisors(
  agent({ name: 'panel-lead', description: 'Writes the panel\'s verdict', system: 'You lead a review panel and write its verdict.' }),
  [agent({ name: 'security', system: 'You look for security and data risks.' }), agent({ name: 'style', system: 'You check wording and consistency.' })],
  { name: 'review-panel' },
);

const server = await a2aServer({
  runnable: panel,
  store: memoryStore(),
  // The same hook as troupe/http: a principal (its tenant) or a refusal.
  authorize: (request) => (request.headers.get('authorization') === `Bearer ${token}` ? { tenant: 'planning-team' } : { status: 401 }),
  run: { adapter },
  card: {
    name: 'review-panel',
    description: 'Reviews a plan or a change: security and style reviewers, one verdict',
    skills: [{ id: 'review-panel', name: 'Review', description: 'Reviews a plan or a change and gives one verdict', tags: ['review', 'security', 'style'] }],
    securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
  },
});
const http = createNodeServer((request) => server.handle(request));
http.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${(http.address() as AddressInfo).port}/`));
process.once('SIGTERM', () => {
  void server.close().then(() => {
    http.closeAllConnections();
    http.close();
  });
});
