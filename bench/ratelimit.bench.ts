/**
 * Rate-limit benchmark (`npm run bench -- ratelimit`): a local
 * OpenAI-compatible server (127.0.0.1, started here) allows 60 requests in
 * any minute and answers 429 with `Retry-After` beyond it. Eight parallel
 * workers call it through troupe's OpenAI adapter for three minutes, behind
 * `rateLimited(..., { requestsPerMinute: 60 })`; the baseline is the same
 * workers without the limiter (the SDK's own retries off) for the same time.
 * Reported: calls that succeeded, 429s that reached the application, the
 * throughput as a share of what the server allows, and the most calls the
 * server accepted in any one second (a burst: the limiter spreads a
 * minute's budget over the minute).
 * `TROUPE_BENCH_RATELIMIT_SECONDS` shortens both runs (default 180).
 */
import { setMaxListeners } from 'node:events';
import { isTroupeError, type ModelAdapter } from 'troupe';
import { openaiAdapter } from 'troupe/adapters/openai';
import { rateLimited } from 'troupe/adapters/rate-limit';
import { startLimitedChatServer } from '../test/helpers/limited-chat-server.js';

const WORKERS = 8;
const LIMIT = 60;
const WINDOW_MS = 60_000;

interface Result {
  succeeded: number;
  rateLimitedSeen: number;
  otherErrors: number;
  serverRefused: number;
  /** The most calls the server accepted in any window of one second. */
  busiestSecond: number;
  seconds: number;
}

/** The most of `times` (sorted, ms) in any window of `ms`. */
function busiest(times: readonly number[], ms: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= ms) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

async function drive(seconds: number, wrap: (adapter: ModelAdapter) => ModelAdapter): Promise<Result> {
  const server = await startLimitedChatServer({ limit: LIMIT, windowMs: WINDOW_MS, latencyMs: 20 });
  const adapter = wrap(openaiAdapter({ baseURL: server.url, model: 'bench', maxRetries: 0 }));
  const deadline = AbortSignal.timeout(seconds * 1000);
  setMaxListeners(8 * WORKERS, deadline);
  const result: Result = { succeeded: 0, rateLimitedSeen: 0, otherErrors: 0, serverRefused: 0, busiestSecond: 0, seconds };
  try {
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, w) => {
        const session = await adapter.openSession({ agent: `worker-${w}` });
        while (!deadline.aborted) {
          try {
            await session.send(`task ${w}`, { signal: deadline });
            if (!deadline.aborted) result.succeeded++;
          } catch (error) {
            if (deadline.aborted) break;
            if (isTroupeError(error, 'rate_limited')) {
              result.rateLimitedSeen++;
              // An application without a limiter would back off; wait a second as a polite client would.
              await new Promise((r) => setTimeout(r, 1000));
            } else result.otherErrors++;
          }
        }
      }),
    );
  } finally {
    result.serverRefused = server.refused.length;
    result.busiestSecond = busiest([...server.accepted].sort((a, b) => a - b), 1000);
    await server.close();
  }
  return result;
}

export default async function bench(): Promise<void> {
  const seconds = Number(process.env.TROUPE_BENCH_RATELIMIT_SECONDS ?? 180);
  // A sliding window of a minute: LIMIT at the start of each minute the run reaches into.
  const allowed = LIMIT * Math.ceil((seconds * 1000) / WINDOW_MS);
  console.log(`${WORKERS} workers, ${seconds} s, server allows ${LIMIT} requests per minute (${allowed} in the run)\n`);
  const limited = await drive(seconds, (a) => rateLimited(a, { requestsPerMinute: LIMIT }));
  const bare = await drive(seconds, (a) => a);
  console.log('| run | succeeded | share of allowed | 429s seen by the app | 429s sent by the server | most accepted in one second | other errors |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [name, r] of [
    ['rateLimited (60 rpm)', limited],
    ['no limiter (baseline)', bare],
  ] as const) {
    console.log(`| ${name} | ${r.succeeded} | ${((100 * r.succeeded) / allowed).toFixed(1)} % | ${r.rateLimitedSeen} | ${r.serverRefused} | ${r.busiestSecond} | ${r.otherErrors} |`);
  }
}
