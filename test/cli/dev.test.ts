// `troupe dev [folder]` in process: it says which adapter and store it
// uses, lists the folder's agents, teams, templates and squads (three
// sections), prints the URL, serves the page, the script and the
// catalogue, starts runs of each kind, replays and forks a run, refuses
// requests that do not come from this machine, and stops on its signal.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const folder = join(import.meta.dirname, '..', '..', 'examples', 'dev-team');
const tempRoot = tempDirs('troupe-cli-dev-');

/** `troupe dev` until `stop()`: its URL, its output so far, and its exit code once stopped. */
async function dev(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const controller = new AbortController();
  const exited = main(['dev', ...args], { out: (t) => out.push(t), err: (t) => err.push(t), env, signal: controller.signal });
  for (let i = 0; i < 400 && !out.some((l) => l.startsWith('troupe dev: http')); i++) {
    if (await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 25))])) break;
  }
  const url = out.find((l) => l.startsWith('troupe dev: http'))?.slice('troupe dev: '.length);
  return { url: url!, out, err, stop: async () => (controller.abort(), await exited) };
}

async function json<T>(response: Response): Promise<T> {
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return (await response.json()) as T;
}

async function waitForEnd(url: string, runId: string): Promise<{ ended: boolean; meta: { status?: string; reason?: string } }> {
  for (let i = 0; i < 400; i++) {
    const run = await json<{ ended: boolean; meta: { status?: string } }>(await fetch(`${url}api/runs/${runId}`));
    if (run.ended) return run;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${runId} did not end`);
}

describe('troupe dev', () => {
  it('lists the folder, serves the interface on 127.0.0.1 and stops on its signal', async () => {
    const server = await dev([folder, '--port', '0'], { TROUPE_ADAPTER: '' });
    try {
      expect(server.err).toContain("troupe dev: adapter scripted (the default): offline replies, not a model's (routers pick their first destination, agents echo); --adapter or TROUPE_ADAPTER picks a model");
      expect(server.err).toContain('troupe dev: runs are kept in memory until troupe dev stops (--store <dir> keeps them)');
      expect(server.out).toContain('  agents             billing, desk, lead-reviewer, security-reviewer, style-reviewer, support');
      expect(server.out).toContain('  teams              reviewers');
      expect(server.out).toContain('  plan templates     fix-module');
      expect(server.out).toContain('  squads (repo)      Nostromo');
      expect(server.out.find((l) => l.startsWith('  squads (built in)'))).toContain('code-review');
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);

      const page = await fetch(server.url);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await page.text()).toContain('<troupe-app endpoint="/api"');
      const script = await fetch(`${server.url}troupe-ui.js`);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect((await fetch(`${server.url}troupe-ui.js`, { headers: { 'if-none-match': script.headers.get('etag')! } })).status).toBe(304);

      const catalog = await json<{ adapter: string; entries: Array<{ kind: string; name: string; source?: string }>; features: Record<string, boolean> }>(await fetch(`${server.url}api/catalog`));
      expect(catalog.adapter).toBe('scripted');
      const names = (kind: string, source?: string) => catalog.entries.filter((e) => e.kind === kind && (source === undefined || e.source === source)).map((e) => e.name);
      expect(names('planning')).toEqual(['lead']);
      expect(names('team')).toEqual(['reviewers']);
      expect(names('template')).toEqual(['fix-module']);
      expect(names('squad', 'repo')).toEqual(['Nostromo']);
      expect(names('squad', 'builtin')).toContain('bug-hunt');
      expect(catalog.features).toEqual({ report: true, replay: true, fork: true, instructions: true });

      // Only this machine: another page (its Origin) and another host name are refused.
      expect((await fetch(`${server.url}api/runs`, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
      expect((await fetch(`${server.url}api/runs`, { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'text/plain' }, body: '{"input":"x"}' })).status).toBe(403);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(server.err.at(-1)).toBe('troupe dev: stopped');
  });

  it('starts a router, a team, a template and a squad; replays one, and forks the template at a checkpoint', { timeout: 60_000 }, async () => {
    const store = join(tempRoot(), 'store');
    const server = await dev([folder, '--port', '0', '--store', store], { TROUPE_ADAPTER: '' });
    expect(server.err).toContain(`troupe dev: runs are logged in ${store}`);
    try {
      const start = async (target: object, input = 'I was charged twice') =>
        (await json<{ runId: string }>(await fetch(`${server.url}api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input, target }) }))).runId;
      const desk = await start({ kind: 'agent', name: 'desk' });
      const team = await start({ kind: 'team', name: 'reviewers' }, 'Review the login change');
      const template = await start({ kind: 'template', name: 'fix-module', values: { module: 'cache' } }, 'Fix the cache');
      const squad = await start({ kind: 'squad', name: 'Nostromo', source: 'repo' }, 'Fix the airlock');
      const statuses = [];
      for (const runId of [desk, team, template, squad]) {
        const { meta } = await waitForEnd(server.url, runId);
        statuses.push(`${meta.status}${meta.reason ? ` (${meta.reason})` : ''}`);
      }
      // The offline team talks until its last round; the squad's loop meets its goal.
      expect(statuses).toEqual(['completed', 'completed (max-rounds)', 'completed', 'completed (goal-met)']);
      const runs = await json<{ runs: Array<{ runId: string; input?: string; reason?: string }> }>(await fetch(`${server.url}api/runs`));
      expect(runs.runs.find((r) => r.runId === desk)?.input).toBe('I was charged twice');
      // The run history shows the reason after the status.
      expect(runs.runs.find((r) => r.runId === team)?.reason).toBe('max-rounds');
      const report = await fetch(`${server.url}api/runs/${template}/report`);
      expect(await report.text()).toContain('<!doctype html>');

      const replayed = await json<{ runId: string }>(await fetch(`${server.url}api/runs/${desk}/replay`, { method: 'POST' }));
      expect((await waitForEnd(server.url, replayed.runId)).meta.status).toBe('completed');
      const { checkpoints } = await json<{ checkpoints: Array<{ index: number; kind: string }> }>(await fetch(`${server.url}api/runs/${template}/checkpoints`));
      expect(checkpoints.some((c) => c.kind === 'plan')).toBe(true);
      const forked = await json<{ runId: string }>(await fetch(`${server.url}api/runs/${template}/fork`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ checkpoint: checkpoints[1]!.index }) }));
      expect((await waitForEnd(server.url, forked.runId)).meta.status).toBe('completed');

      const bad = await fetch(`${server.url}api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'x', target: { kind: 'agent', name: 'nobody' } }) });
      expect(bad.status).toBeGreaterThanOrEqual(400);
    } finally {
      await server.stop();
    }
  });

  it('refuses a bad port and an unknown adapter', async () => {
    const out: string[] = [];
    const err: string[] = [];
    expect(await main(['dev', folder, '--port', 'x'], { out: (t) => out.push(t), err: (t) => err.push(t), env: {} })).toBe(2);
    expect(err.join('\n')).toContain('expected --port to be a port number, got "x"');
    expect(await main(['dev', folder, '--adapter', 'nope'], { out: (t) => out.push(t), err: (t) => err.push(t), env: {} })).toBe(1);
    expect(err.join('\n')).toContain('Unknown adapter "nope"');
  });
});
