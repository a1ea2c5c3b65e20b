/**
 * The orchestrator's lead under a context budget. An `orchestrate` run of
 * n iterations with three workers on the scripted adapter, measured as a
 * chat API would bill it: each call sends the system prompt, every earlier
 * message and reply of its session, and the new input. Without a budget the
 * lead's input grows with the square of the iterations; with
 * `context: { maxTokens: 32_000 }` its conversation is compacted (earlier
 * worker results and exchanges dropped) and grows linearly. Tokens are the
 * default estimate (4 characters a token). Times are medians of 5 runs, as
 * ratios against the run without a budget measured in the same process.
 *
 *   npm run bench -- context
 */
import { performance } from 'node:perf_hooks';
import type { ModelAdapter } from '../src/core/adapter.js';
import { estimateTokens } from '../src/core/context-window.js';
import { run } from '../src/core/run.js';
import { scriptedAdapter, inputText, type ScriptedRequest } from '../src/adapters/scripted.js';
import { agent } from '../src/patterns/agent.js';
import { orchestrate } from '../src/patterns/orchestrate.js';
import { NEEDS_ITERATION } from '../src/reflection/sentinels.js';

const WORKERS = ['analyst', 'coder', 'tester'];

/** Deterministic words, different for every seed (so the loop never looks stalled). */
function words(seed: number, chars: number): string {
  let x = seed * 2654435761 + 1;
  const out: string[] = [];
  let length = 0;
  while (length < chars) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const w = `w${(x % 100_000).toString(36)}`;
    out.push(w);
    length += w.length + 1;
  }
  return out.join(' ');
}

/** What the new session's message asks for: the text after a compacted history, if any. */
function current(req: ScriptedRequest): string {
  const marker = '[The conversation continues]';
  const at = req.text.lastIndexOf(marker);
  return at < 0 ? req.text : req.text.slice(at + marker.length);
}

interface Measure {
  /** Characters each call of the lead sent (system, history and input). */
  lead: number[];
  /** Characters the workers' calls sent. */
  workers: number;
}

/** The scripted adapter, measured: per session, every call's whole context. */
function measured(workerChars: number, measure: Measure): ModelAdapter {
  let iteration = 0;
  const inner = scriptedAdapter({
    rules: [
      {
        agent: 'lead',
        reply: (req) => {
          if (current(req).includes('## WORKER RESULTS')) return `Synthesis ${iteration}: ${words(iteration, 600)}\n${NEEDS_ITERATION}`;
          iteration++;
          return WORKERS.map((w) => `@worker:${w}\nPart ${iteration} for ${w}: ${words(iteration * 7 + w.length, 150)}\n@end`).join('\n');
        },
      },
      { agent: /.*/, reply: (req) => `Answer of ${req.agent}: ${words(req.text.length, workerChars)}` },
    ],
  });
  return {
    id: 'measured',
    capabilities: inner.capabilities,
    async openSession(spec, options) {
      const session = await inner.openSession(spec, options);
      let history = (spec.system ?? '').length;
      return {
        id: session.id,
        async send(input, options) {
          const text = inputText(input);
          const sent = history + text.length;
          if (spec.agent === 'lead') measure.lead.push(sent);
          else measure.workers += sent;
          const turn = await session.send(input, options);
          history = sent + turn.text.length;
          return turn;
        },
        close: () => session.close(),
      };
    },
  };
}

async function once(iterations: number, workerChars: number, budget: number | undefined): Promise<{ measure: Measure; ms: number; compactions: number }> {
  const measure: Measure = { lead: [], workers: 0 };
  const adapter = measured(workerChars, measure);
  const lead = agent({ name: 'lead', system: 'You lead a team of three. Plan, delegate, synthesise.', ...(budget ? { context: { maxTokens: budget } } : {}) });
  const loop = orchestrate({
    lead,
    workers: WORKERS.map((name) => agent({ name, system: `You are the ${name}.` })),
    maxIterations: iterations,
    autoAdjust: false,
  });
  let compactions = 0;
  const start = performance.now();
  const result = await run(loop, 'Build a small web shop with a cart and a checkout.', {
    adapter,
    onEvent: (e) => {
      if (e.type === 'context.compacted') compactions++;
    },
  });
  const ms = performance.now() - start;
  if (result.iterations !== iterations) throw new Error(`expected ${iterations} iterations, got ${result.iterations} (${result.status})`);
  return { measure, ms, compactions };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

export default async function bench(): Promise<void> {
  const scenarios = [
    { label: 'issue-sized answers (900 chars)', workerChars: 900, budgets: [32_000, 8_000] },
    { label: 'long answers (8000 chars)', workerChars: 8000, budgets: [32_000] },
  ];
  for (const { label, workerChars, budgets } of scenarios) {
    const modes = [undefined, ...budgets];
    const name = (m: number | undefined) => (m === undefined ? 'none' : `${m} tokens`);
    console.log(`\n### ${label}, three workers\n`);
    console.log('| iterations | context budget | lead input (chars) | lead share | largest lead call (tokens) | compactions | total / total at 10 | median time ratio |');
    console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    const base: Record<string, number> = {};
    for (const iterations of [10, 20, 40]) {
      const times: Record<string, number[]> = {};
      const last: Record<string, Awaited<ReturnType<typeof once>>> = {};
      for (let i = 0; i < 5; i++) {
        for (const m of modes) {
          const r = await once(iterations, workerChars, m);
          (times[name(m)] ??= []).push(r.ms);
          last[name(m)] = r;
        }
      }
      const baseline = median(times.none!);
      for (const mode of modes.map(name)) {
        const { measure, compactions } = last[mode]!;
        const lead = sum(measure.lead);
        if (iterations === 10) base[mode] = lead;
        const share = ((100 * lead) / (lead + measure.workers)).toFixed(1);
        const largest = estimateTokens('x'.repeat(Math.max(...measure.lead)));
        console.log(
          `| ${iterations} | ${mode} | ${lead.toLocaleString('en')} | ${share} % | ${largest.toLocaleString('en')} | ${compactions} | ${(lead / base[mode]!).toFixed(2)} | ${(median(times[mode]!) / baseline).toFixed(2)} |`,
        );
      }
    }
  }
}
