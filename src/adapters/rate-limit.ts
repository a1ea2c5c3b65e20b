/**
 * Rate limits per provider: `rateLimited(adapter, limits)` is an adapter
 * with the same contract whose sessions share requests-per-minute,
 * tokens-per-minute and concurrency limits. A per-minute budget goes out
 * evenly over the minute — a burst of a second's share at most (`burstMs`),
 * then as it refills — since providers enforce per-minute limits over
 * shorter windows too. A provider's 429 (a
 * `RateLimitError`) holds every further call for its `Retry-After` and the
 * call is sent again. Counts live in a {@link RateLimitState}: in memory for
 * one process, or in Redis (`redisRateLimitState` from `troupe/redis`) for
 * every process.
 * @module troupe/adapters/rate-limit
 * @category Adapters
 */
import { randomUUID } from 'node:crypto';
import type { ModelAdapter, ModelSession, ModelTurn, SendOptions, SessionSpec, ToolResult } from '../core/adapter.js';
import { throwIfAborted } from '../core/abort.js';
import { abortError, realClock, type Clock } from '../core/clock.js';
import { ConfigurationError, describeValue, isTroupeError, RateLimitError } from '../core/errors.js';
import { defineOptions, func, positiveInteger, positiveNumber, check, clock as clockCheck } from '../core/options.js';
import { retryOptions, type RetryOptions } from '../core/retry.js';
import { defined } from '../core/defined.js';

/** The limits, each optional (absent: no limit of that kind). */
export interface RateLimits {
  /** Calls started in any window of `windowMs` (a minute). */
  requestsPerMinute?: number;
  /** Tokens (input and output) of the calls started in any window of `windowMs`; a call reserves its estimate and settles on its usage. */
  tokensPerMinute?: number;
  /** Calls in flight at once. */
  maxParallel?: number;
}

/** One attempt to take a slot. */
export interface AcquireRequest {
  /** Clock time. */
  now: number;
  /** The window of the per-minute limits, in ms. */
  windowMs: number;
  limits: RateLimits;
  /** Tokens the call reserves (its estimate). */
  tokens: number;
  /** A unique id of this call. */
  leaseId: string;
  /** When a call that never releases stops counting against `maxParallel` (a crashed process). */
  leaseExpiresAt: number;
  /**
   * How much of each per-minute limit may go out at once, as time: a bucket
   * per limit holds `limit × burstMs / windowMs` (at least one call) and
   * refills continuously at the limit's rate. Absent: the window alone.
   */
  burstMs?: number;
}

/** What {@link RateLimitState.acquire} answers: taken, or how long until it may be. */
export type AcquireResult = { ok: true } | { ok: false; waitMs: number; reason: 'requests' | 'tokens' | 'concurrency' | 'paused' };

/**
 * Where the counts of a limiter live. Every method is one atomic step for
 * everyone who shares the state (one process for the memory state, every
 * process for Redis), so limits hold across all of them.
 */
export interface RateLimitState {
  /** Take a request slot, `tokens` and a concurrency lease at once, or say how long to wait. */
  acquire(request: AcquireRequest, options?: RateLimitCallOptions): Promise<AcquireResult>;
  /**
   * The call `leaseId` ended: free its lease and replace its reserved tokens
   * by `tokens` (its usage). `refused`: the provider refused it (a 429), so
   * it counts against no window at all.
   */
  release(release: { now: number; leaseId: string; tokens: number; refused?: boolean }, options?: RateLimitCallOptions): Promise<void>;
  /** The provider asked to wait: nothing starts before `until` (clock time). */
  pause(pause: { now: number; until: number; windowMs: number }, options?: RateLimitCallOptions): Promise<void>;
}

/** Options of every {@link RateLimitState} call. */
export interface RateLimitCallOptions {
  /** Cancels the call (a state in Redis: the command). */
  signal?: AbortSignal;
}

/**
 * A bucket that refills continuously: what a per-minute limit lets out now.
 * `level` may go below zero (a call larger than the bucket takes it whole
 * once it is full, and later calls wait until the debt is refilled).
 * @internal
 */
export interface RefillingBucket {
  level: number;
  at: number;
}

/** The bucket's capacity for `perMinute` and `burstMs`: at least one. */
export function bucketCapacity(perMinute: number, burstMs: number, windowMs: number): number {
  return Math.max(1, Math.ceil((perMinute * burstMs) / windowMs));
}

/** Refill `bucket` (created full) at `perMinute` per `windowMs` up to `capacity`, as of `now`. */
function refill(bucket: RefillingBucket | undefined, now: number, perMinute: number, capacity: number, windowMs: number): RefillingBucket {
  if (!bucket) return { level: capacity, at: now };
  const level = Math.min(capacity, bucket.level + (Math.max(0, now - bucket.at) * perMinute) / windowMs);
  return { level, at: Math.max(now, bucket.at) };
}

/** How long until `bucket` holds `need` (at most its capacity), refilling at `perMinute` per `windowMs`: 0 when it does. */
function bucketWait(bucket: RefillingBucket, need: number, perMinute: number, windowMs: number): number {
  // A little slack for the rounding of fractional refills.
  const missing = need - bucket.level;
  return missing <= 1e-9 ? 0 : Math.max(1, Math.ceil((missing * windowMs) / perMinute));
}

/**
 * The counts in this process's memory: sliding windows of the requests and
 * tokens started in the last `windowMs`, a refilling bucket per limit that
 * spreads them evenly (see {@link AcquireRequest.burstMs}), the leases in
 * flight, and the pause a provider asked for.
 */
export function memoryRateLimitState(): RateLimitState {
  const requests: Array<{ time: number; leaseId: string }> = [];
  const tokens: Array<{ time: number; leaseId: string; tokens: number }> = [];
  const leases = new Map<string, number>();
  let pausedUntil = 0;
  let requestBucket: RefillingBucket | undefined;
  let tokenBucket: RefillingBucket | undefined;
  return {
    async acquire(r) {
      const since = r.now - r.windowMs;
      while (requests.length > 0 && requests[0]!.time <= since) requests.shift();
      while (tokens.length > 0 && tokens[0]!.time <= since) tokens.shift();
      for (const [id, expires] of leases) if (expires <= r.now) leases.delete(id);
      let wait = 0;
      let reason: 'requests' | 'tokens' | 'concurrency' | 'paused' = 'paused';
      const raise = (ms: number, why: typeof reason) => {
        if (ms > wait) {
          wait = ms;
          reason = why;
        }
      };
      if (pausedUntil > r.now) raise(pausedUntil - r.now, 'paused');
      const rpm = r.limits.requestsPerMinute;
      if (rpm !== undefined && requests.length >= rpm) raise(requests[requests.length - rpm]!.time + r.windowMs - r.now, 'requests');
      const tpm = r.limits.tokensPerMinute;
      const burst = r.burstMs;
      let reqBucket: RefillingBucket | undefined;
      let tokBucket: RefillingBucket | undefined;
      if (burst !== undefined && rpm !== undefined) {
        reqBucket = refill(requestBucket, r.now, rpm, bucketCapacity(rpm, burst, r.windowMs), r.windowMs);
        raise(bucketWait(reqBucket, 1, rpm, r.windowMs), 'requests');
      }
      if (burst !== undefined && tpm !== undefined) {
        const capacity = bucketCapacity(tpm, burst, r.windowMs);
        tokBucket = refill(tokenBucket, r.now, tpm, capacity, r.windowMs);
        raise(bucketWait(tokBucket, Math.min(r.tokens, capacity), tpm, r.windowMs), 'tokens');
      }
      if (tpm !== undefined) {
        let sum = 0;
        for (const t of tokens) sum += t.tokens;
        if (sum > 0 && sum + r.tokens > tpm) {
          let freed = 0;
          for (const t of tokens) {
            freed += t.tokens;
            if (sum - freed + r.tokens <= tpm || sum - freed <= 0) {
              raise(t.time + r.windowMs - r.now, 'tokens');
              break;
            }
          }
        }
      }
      const conc = r.limits.maxParallel;
      if (conc !== undefined && leases.size >= conc) raise(Math.max(1, Math.min(...leases.values()) - r.now), 'concurrency');
      if (wait > 0) return { ok: false, waitMs: wait, reason };
      if (reqBucket) requestBucket = { level: reqBucket.level - 1, at: reqBucket.at };
      if (tokBucket) tokenBucket = { level: tokBucket.level - r.tokens, at: tokBucket.at };
      requests.push({ time: r.now, leaseId: r.leaseId });
      tokens.push({ time: r.now, leaseId: r.leaseId, tokens: r.tokens });
      leases.set(r.leaseId, r.leaseExpiresAt);
      return { ok: true };
    },
    async release(r) {
      leases.delete(r.leaseId);
      if (r.refused) {
        const request = requests.findIndex((q) => q.leaseId === r.leaseId);
        if (request >= 0) {
          requests.splice(request, 1);
          if (requestBucket) requestBucket.level += 1;
        }
        const token = tokens.findIndex((t) => t.leaseId === r.leaseId);
        if (token >= 0) {
          if (tokenBucket) tokenBucket.level += tokens[token]!.tokens;
          tokens.splice(token, 1);
        }
        return;
      }
      const entry = tokens.find((t) => t.leaseId === r.leaseId);
      if (!entry) return;
      // The bucket gives back what the estimate took beyond the usage, or takes what the usage went beyond it.
      if (tokenBucket) tokenBucket.level += entry.tokens - r.tokens;
      entry.tokens = r.tokens;
    },
    async pause(p) {
      pausedUntil = Math.max(pausedUntil, p.until);
    },
  };
}

/** Options of {@link rateLimited}. */
export interface RateLimitOptions extends RateLimits {
  /** Where the counts live. Default: a memory state of this limiter (one process). */
  state?: RateLimitState;
  /** The clock of every wait. Default: the real clock. */
  clock?: Clock;
  /** The window of the per-minute limits, in ms. Default: 60000. */
  windowMs?: number;
  /**
   * How much of each per-minute limit may go out at once, as time: at most
   * `requestsPerMinute × burstMs / windowMs` calls (at least one) and as
   * many of `tokensPerMinute`'s tokens start together, and the rest refills
   * continuously, so a minute's budget is spread over the minute (providers
   * enforce per-minute limits over shorter windows too). At 600 requests a
   * minute: 10 at once, then one every 100 ms. `windowMs` lets a whole
   * window out at once (the window alone limits). Default: a 60th of
   * `windowMs` (1000: a second's share of a minute).
   */
  burstMs?: number;
  /** Tokens a call reserves before it is sent. Default: the conversation's characters so far (system, inputs, replies) divided by 4. */
  estimateTokens?: (call: { input: string | ToolResult[]; spec: SessionSpec; historyChars: number }) => number;
  /**
   * Calls refused with a 429: sent again up to `maxRetries` times (default
   * 8), after the `Retry-After` the 429 carried, or `delayMs` when it names
   * none (default 1000).
   */
  retry?: RetryOptions;
  /** How often a call waiting for a concurrency slot held elsewhere looks again, in ms. Default: 50. */
  pollMs?: number;
  /** A call that never ends stops holding its concurrency slot after this long, in ms. Default: 600000. */
  leaseMs?: number;
}

/** An adapter behind a rate limiter (see {@link rateLimited}). */
export interface RateLimitedAdapter extends ModelAdapter {
  /** The adapter it wraps. */
  readonly inner: ModelAdapter;
  /** Calls a 429 sent again, since the adapter was made. */
  readonly retried: number;
}

function inputChars(input: string | ToolResult[]): number {
  if (typeof input === 'string') return input.length;
  let n = 0;
  for (const r of input) n += r.content.length;
  return n;
}

/**
 * Put an adapter behind rate limits shared by every session made from it
 * (and, with a Redis state, by every process). Each `send` waits (on the
 * injected clock, honouring its signal) until a request slot, its estimated
 * tokens and a concurrency slot are free; a provider's 429 (a
 * `RateLimitError`) pauses every session for the `Retry-After` it carried
 * and the call is sent again, up to `retry.maxRetries` times, so the application
 * does not see it. The result has the same contract as any adapter.
 *
 * @example
 * ```ts
 * const adapter = rateLimited(openaiAdapter({ model: 'gpt-4.1', maxRetries: 0 }), { requestsPerMinute: 500, tokensPerMinute: 200_000, maxParallel: 8 });
 * ```
 */
export function rateLimited(adapter: ModelAdapter, options: RateLimitOptions = {}): RateLimitedAdapter {
  if (!adapter || typeof adapter.openSession !== 'function') throw new ConfigurationError(`Expected \`adapter\` to be a model adapter, got ${describeValue(adapter)}`);
  checkOptions(options);
  const limiter = new RateLimiter(options);
  return {
    id: adapter.id,
    capabilities: adapter.capabilities,
    inner: adapter,
    get retried() {
      return limiter.retried;
    },
    async openSession(spec, options) {
      return limiter.session(await adapter.openSession(spec, options), spec);
    },
  };
}

const rateLimitOptions = defineOptions<RateLimitOptions>('rateLimited', {
  requestsPerMinute: positiveInteger,
  tokensPerMinute: positiveInteger,
  maxParallel: positiveInteger,
  state: check('a rate-limit state (with acquire())', (v) => typeof (v as RateLimitState | null)?.acquire === 'function'),
  clock: clockCheck,
  windowMs: positiveNumber,
  burstMs: positiveNumber,
  estimateTokens: func,
  retry: retryOptions,
  pollMs: positiveNumber,
  leaseMs: positiveNumber,
});

function checkOptions(options: RateLimitOptions): void {
  rateLimitOptions.check(options);
}

/** The limits of one `rateLimited` adapter: slots taken from its state, waits on its clock, retries of refused calls. */
class RateLimiter {
  /** Calls retried after a 429. */
  retried = 0;
  readonly #clock: Clock;
  readonly #state: RateLimitState;
  readonly #windowMs: number;
  readonly #burstMs: number;
  readonly #maxRetries: number;
  readonly #defaultRetryAfterMs: number;
  readonly #pollMs: number;
  readonly #leaseMs: number;
  readonly #limits: RateLimits;
  readonly #estimate: NonNullable<RateLimitOptions['estimateTokens']>;
  /** Calls of this process waiting for a slot another call of this process frees: woken at once. */
  readonly #waiters = new Set<() => void>();

  constructor(options: RateLimitOptions) {
    this.#clock = options.clock ?? realClock;
    this.#state = options.state ?? memoryRateLimitState();
    this.#windowMs = options.windowMs ?? 60_000;
    this.#burstMs = options.burstMs ?? this.#windowMs / 60;
    this.#maxRetries = options.retry?.maxRetries ?? 8;
    this.#defaultRetryAfterMs = options.retry?.delayMs ?? 1000;
    this.#pollMs = options.pollMs ?? 50;
    this.#leaseMs = options.leaseMs ?? 600_000;
    this.#limits = {
      ...defined({ requestsPerMinute: options.requestsPerMinute, tokensPerMinute: options.tokensPerMinute, maxParallel: options.maxParallel }),
    };
    this.#estimate = options.estimateTokens ?? (({ input, historyChars }) => Math.ceil((historyChars + inputChars(input)) / 4));
  }

  /** `session` with every send inside the limits. */
  session(session: ModelSession, spec: SessionSpec): ModelSession {
    let historyChars = spec.system?.length ?? 0;
    return {
      id: session.id,
      send: async (input: string | ToolResult[], sendOptions: SendOptions = {}): Promise<ModelTurn> => {
        const reserved = Math.max(0, Math.ceil(this.#estimate({ input, spec, historyChars })));
        const turn = await this.#send(session, input, sendOptions, reserved);
        historyChars += inputChars(input) + (turn?.text.length ?? 0);
        return turn;
      },
      close: () => session.close(),
    };
  }

  /** Send within the limits; a call the provider refused (429) waits as it asked and is sent again, up to `maxRetries` times. */
  async #send(session: ModelSession, input: string | ToolResult[], sendOptions: SendOptions, reserved: number): Promise<ModelTurn> {
    const signal = sendOptions.signal;
    const clock = this.#clock;
    for (let attempt = 0; ; attempt++) {
      const leaseId = await this.#acquire(reserved, signal);
      let used = reserved;
      let refused = false;
      try {
        const turn = await session.send(input, sendOptions);
        if (turn?.usage) used = (turn.usage.inputTokens ?? 0) + (turn.usage.outputTokens ?? 0);
        return turn;
      } catch (error) {
        if (!isTroupeError(error, 'rate_limited')) throw error;
        // The provider did not take the call: it counts against no window.
        refused = true;
        if (attempt >= this.#maxRetries || signal?.aborted) throw error;
        const after = (error as RateLimitError).retryAfterMs ?? this.#defaultRetryAfterMs;
        const now = clock.now();
        await this.#state.pause({ now, until: now + after, windowMs: this.#windowMs }, defined({ signal }));
        this.retried++;
      } finally {
        await this.#state.release({ now: clock.now(), leaseId, tokens: used, ...(refused ? { refused } : {}) }).catch(() => undefined);
        for (const w of [...this.#waiters]) w();
      }
    }
  }

  async #acquire(tokens: number, signal: AbortSignal | undefined): Promise<string> {
    const leaseId = randomUUID();
    for (;;) {
      throwIfAborted(signal);
      const now = this.#clock.now();
      const request = { now, windowMs: this.#windowMs, limits: this.#limits, tokens, leaseId, leaseExpiresAt: now + this.#leaseMs, burstMs: this.#burstMs };
      const taken = await this.#state.acquire(request, defined({ signal }));
      if (taken.ok) return leaseId;
      await this.#wait(taken.reason === 'concurrency' ? Math.min(taken.waitMs, this.#pollMs) : taken.waitMs, signal);
    }
  }

  /** Wait `ms` on the clock, or until a call of this process frees a slot. */
  #wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const done = (): void => {
        cancel();
        this.#waiters.delete(done);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        cancel();
        this.#waiters.delete(done);
        reject(abortError(signal));
      };
      const cancel = this.#clock.setTimer(done, ms);
      this.#waiters.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
