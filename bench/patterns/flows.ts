/**
 * The pattern benchmark's flows, built against whichever version of troupe
 * is loaded: every flow makes the same model calls in every version (the
 * worker checks the count), on one scripted adapter that answers at once.
 *
 * The versions differ in names only where this release renamed them: the
 * lead of `team` was `coordinator` and that of `orchestrate` was
 * `orchestrator` (docs/conventions.md, "Retired names"). Which name a
 * version takes is found by asking its pattern (the other is refused).
 */
import type { Runnable } from '../../src/core/runnable.js';
import type { ScriptedAdapter, ScriptedRequest, ScriptedTurn } from '../../src/adapters/scripted.js';
import { loadMerged } from '../scheduler/load.js';

/** What the benchmark uses of a version of troupe: its root, `troupe/patterns` and the scripted adapter. */
export type PatternsTroupe = typeof import('../../src/index.js') &
  typeof import('../../src/patterns/index.js') &
  Pick<typeof import('../../src/adapters/scripted.js'), 'scriptedAdapter'>;

/** The exports the flows need: a version without one of them cannot be measured. */
const needed = ['run', 'agent', 'handoff', 'router', 'advisors', 'broadcast', 'sequential', 'team', 'orchestrate', 'reflect', 'scriptedAdapter'] as const;

/** The version whose `src/index.ts` is `source`, with `troupe/patterns` and the scripted adapter (each exists in every version measured). */
export async function loadPatterns(source: string): Promise<PatternsTroupe> {
  const troupe = await loadMerged<PatternsTroupe>(source, ['patterns/index.ts', 'adapters/scripted.ts']);
  const missing = needed.filter((name) => typeof (troupe as unknown as Record<string, unknown>)[name] !== 'function');
  if (missing.length > 0) throw new Error(`${source} does not export ${missing.join(', ')}`);
  return troupe;
}

/**
 * The flows: what each does, the model calls one run makes, and the runs a
 * worker times (20 samples of `runs / 20`), about 1 s of runs each on the
 * shared 2-core machine.
 */
export const flows = {
  agent: { label: 'a single agent', calls: 1, runs: 4_000 },
  handoff: { label: 'handoff: a chain of 3 agents', calls: 3, runs: 2_000 },
  router: { label: 'router: 1 turn, then 1 of 3 specialists', calls: 2, runs: 1_000 },
  advisors: { label: 'advisors: 4 in parallel, then the main agent', calls: 5, runs: 1_500 },
  broadcast: { label: 'broadcast to 3 agents', calls: 3, runs: 1_500 },
  sequential: { label: 'sequential: 3 agents', calls: 3, runs: 2_000 },
  team: { label: 'team: 3 members, 2 rounds, the lead answers', calls: 7, runs: 800 },
  orchestrate: { label: 'orchestrate: lead + 2 workers, 3 iterations', calls: 12, runs: 500 },
  reflect: { label: 'reflect: a writer, 3 iterations', calls: 3, runs: 1_500 },
} as const;

export type Flow = keyof typeof flows;

/** The lead's two `@worker:` assignments, every iteration. */
const PLAN = '@worker:coder\nWrite the form.\n@end\n@worker:tester\nWrite the tests.\n@end';

/**
 * The scripted replies: the router's `route_to` call; the lead's plan on its
 * odd turns and a synthesis on its even ones; drafts and syntheses that
 * share no word (so no stall ends a loop early, and no sentinel ends it
 * before its last iteration); a short answer from everyone else.
 */
function reply(r: ScriptedRequest): string | ScriptedTurn {
  if (r.agent === 'desk') return { toolCalls: [{ name: 'route_to', arguments: { agent: 'billing', reason: 'an invoice' } }] };
  if (r.agent === 'lead') return r.turn % 2 === 1 ? PLAN : `Synthesis s${r.turn}a s${r.turn}b s${r.turn}c.`;
  if (r.agent === 'writer') return `Draft d${r.turn}a d${r.turn}b d${r.turn}c.`;
  return `The answer of ${r.agent}.`;
}

/**
 * The name `build` (a pattern given its lead under a name) accepts for the
 * lead: `lead`, or `old` in a version from before the rename (which
 * refuses `lead` as it refuses a missing lead).
 */
function leadKey(build: (key: string) => unknown, old: string): string {
  try {
    build('lead');
    return 'lead';
  } catch {
    build(old);
    return old;
  }
}

/** Flow `flow` of version `troupe`, and the adapter its runs use. */
export function buildFlow(troupe: PatternsTroupe, flow: Flow): { runnable: Runnable; adapter: ScriptedAdapter } {
  const adapter = troupe.scriptedAdapter({ fallback: reply });
  const a = (name: string) => troupe.agent({ name, system: `You are ${name}.` });
  const three = () => [a('first'), a('second'), a('third')];
  let runnable: Runnable;
  switch (flow) {
    case 'agent':
      runnable = a('solo');
      break;
    case 'handoff':
      runnable = troupe.handoff(three());
      break;
    case 'router':
      runnable = troupe.router(a('desk'), [a('billing'), a('legal'), a('tech')]);
      break;
    case 'advisors':
      runnable = troupe.advisors(a('main'), [a('security'), a('performance'), a('style'), a('tests')]);
      break;
    case 'broadcast':
      runnable = troupe.broadcast(three());
      break;
    case 'sequential':
      runnable = troupe.sequential(three());
      break;
    case 'team': {
      const options = (key: string) => ({ members: three(), [key]: a('chair'), maxRounds: 2 }) as unknown as Parameters<PatternsTroupe['team']>[0];
      runnable = troupe.team(options(leadKey((key) => troupe.team(options(key)), 'coordinator')));
      break;
    }
    case 'orchestrate': {
      const options = (key: string) => ({ [key]: a('lead'), workers: [a('coder'), a('tester')], maxIterations: 3 }) as unknown as Parameters<PatternsTroupe['orchestrate']>[0];
      runnable = troupe.orchestrate(options(leadKey((key) => troupe.orchestrate(options(key)), 'orchestrator')));
      break;
    }
    case 'reflect':
      runnable = troupe.reflect(a('writer'), { maxIterations: 3 });
      break;
  }
  return { runnable, adapter };
}
