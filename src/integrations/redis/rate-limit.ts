/**
 * `redisRateLimitState`: the counts of a rate limiter in Redis, so every
 * process that limits one provider shares its limits.
 * @module
 */
import { raceAbort, throwIfAborted } from '../../core/abort.js';
import { realClock, type Clock } from '../../core/clock.js';
import { ConfigurationError, StoreError, TroupeError, describeValue, errorMessage } from '../../core/errors.js';
import { anything, clock as clockCheck, defineOptions, expectPositiveNumber } from '../../core/options.js';
import type { AcquireResult, RateLimitState } from '../../adapters/rate-limit.js';
import { RedisLink, type RedisConnection } from './connection.js';

/** Options of {@link redisRateLimitState}. */
export interface RedisRateLimitStateOptions {
  /** A `redis://` URL, ioredis options (a connection of its own, closed by `close()`), or an ioredis client you own. */
  connection: RedisConnection;
  /** The limiter's name: every process that limits the same provider account uses the same name. */
  name: string;
  /** Put before every key. Default: `'troupe:'`. */
  prefix?: string;
  /** The longest one call may wait for Redis, in ms (then it fails with a `StoreError`). Default: 10000. */
  timeoutMs?: number;
  /** Clock of that time-out. Default: the real clock. */
  clock?: Clock;
}

/** A rate-limit state in Redis. */
export interface RedisRateLimitState extends RateLimitState {
  /** Close the connection the state opened, resolving once it has closed (a client you gave stays open). */
  close(): Promise<void>;
}

// KEYS: requests (zset leaseId→time), tokens (zset leaseId→time), token counts (hash), leases (zset leaseId→expiry), pause (string),
//       buckets (hash: r and t, the levels of the requests and tokens buckets, as of at)
// ARGV: now, window, rpm, tpm, concurrency (0 = no limit), tokens, leaseId, leaseExpiresAt, burstMs (0 = no buckets)
// Returns {0} when taken, else {waitMs, reason} (1 paused, 2 requests, 3 tokens, 4 concurrency).
const ACQUIRE = `local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local rpm, tpm, conc = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local tokens = tonumber(ARGV[6])
local burst = tonumber(ARGV[9] or '0')
local since = now - window
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', since)
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', since)
for _, m in ipairs(old) do redis.call('HDEL', KEYS[3], m) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', since)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
local wait, reason = 0, 1
local paused = tonumber(redis.call('GET', KEYS[5]) or '0')
if paused > now then wait = paused - now end
if rpm > 0 then
  local n = redis.call('ZCARD', KEYS[1])
  if n >= rpm then
    local at = redis.call('ZRANGE', KEYS[1], n - rpm, n - rpm, 'WITHSCORES')
    local w = tonumber(at[2]) + window - now
    if w > wait then wait, reason = w, 2 end
  end
end
if tpm > 0 then
  local entries = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
  local counts = {}
  local sum = 0
  for i = 1, #entries, 2 do
    local c = tonumber(redis.call('HGET', KEYS[3], entries[i]) or '0')
    counts[i] = c
    sum = sum + c
  end
  if sum > 0 and sum + tokens > tpm then
    local freed = 0
    for i = 1, #entries, 2 do
      freed = freed + counts[i]
      if sum - freed + tokens <= tpm or sum - freed <= 0 then
        local w = tonumber(entries[i + 1]) + window - now
        if w > wait then wait, reason = w, 3 end
        break
      end
    end
  end
end
if conc > 0 then
  local held = redis.call('ZCARD', KEYS[4])
  if held >= conc then
    local first = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
    local w = math.max(1, tonumber(first[2]) - now)
    if w > wait then wait, reason = w, 4 end
  end
end
-- Refilling buckets (created full): what each per-minute limit lets out now; a call larger than a bucket waits until it is full.
local rl, tl
local function level(field, rate, cap, at)
  local stored = tonumber(redis.call('HGET', KEYS[6], field) or '')
  if stored == nil or at == nil then return cap end
  return math.min(cap, stored + math.max(0, now - at) * rate / window)
end
local function missing(have, need, rate)
  local m = need - have
  if m <= 1e-9 then return 0 end
  return math.max(1, math.ceil(m * window / rate))
end
if burst > 0 then
  local at = tonumber(redis.call('HGET', KEYS[6], 'at') or '')
  if rpm > 0 then
    rl = level('r', rpm, math.max(1, math.ceil(rpm * burst / window)), at)
    local w = missing(rl, 1, rpm)
    if w > wait then wait, reason = w, 2 end
  end
  if tpm > 0 then
    local cap = math.max(1, math.ceil(tpm * burst / window))
    tl = level('t', tpm, cap, at)
    local w = missing(tl, math.min(tokens, cap), tpm)
    if w > wait then wait, reason = w, 3 end
  end
end
if wait > 0 then return {math.ceil(wait), reason} end
redis.call('ZADD', KEYS[1], now, ARGV[7])
redis.call('ZADD', KEYS[2], now, ARGV[7])
redis.call('HSET', KEYS[3], ARGV[7], tokens)
redis.call('ZADD', KEYS[4], tonumber(ARGV[8]), ARGV[7])
if rl ~= nil or tl ~= nil then
  redis.call('HSET', KEYS[6], 'at', now)
  if rl ~= nil then redis.call('HSET', KEYS[6], 'r', tostring(rl - 1)) end
  if tl ~= nil then redis.call('HSET', KEYS[6], 't', tostring(tl - tokens)) end
end
local ttl = math.ceil(math.max(window, tonumber(ARGV[8]) - now)) + 1000
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ttl) end
redis.call('PEXPIRE', KEYS[6], ttl)
return {0}`;

// KEYS: requests, tokens, token counts, leases, buckets; ARGV: leaseId, tokens, refused ('1': the provider refused the call, it counts nowhere)
// The buckets get back what the call took beyond its usage (all of it when refused), or give what the usage went beyond the estimate.
const RELEASE = `redis.call('ZREM', KEYS[4], ARGV[1])
local buckets = redis.call('EXISTS', KEYS[5]) == 1
local reserved = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '')
if ARGV[3] == '1' then
  if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 and buckets and redis.call('HEXISTS', KEYS[5], 'r') == 1 then redis.call('HINCRBYFLOAT', KEYS[5], 'r', 1) end
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
  if reserved ~= nil and buckets and redis.call('HEXISTS', KEYS[5], 't') == 1 then redis.call('HINCRBYFLOAT', KEYS[5], 't', reserved) end
elseif redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
  if reserved ~= nil and buckets and redis.call('HEXISTS', KEYS[5], 't') == 1 then redis.call('HINCRBYFLOAT', KEYS[5], 't', reserved - tonumber(ARGV[2])) end
end
return 1`;

// KEYS: pause; ARGV: until, ttl
const PAUSE = `local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1`;

const REASONS = ['paused', 'paused', 'requests', 'tokens', 'concurrency'] as const;

const redisRateLimitStateOptions = defineOptions<RedisRateLimitStateOptions>('redisRateLimitState', { connection: anything, name: anything, prefix: anything, timeoutMs: anything, clock: clockCheck });

/**
 * Keep a rate limiter's counts in Redis: each acquire, release and pause is
 * one Lua script, so the limits hold for every process that uses the same
 * Redis, `prefix` and `name`. Times are the limiters' clocks (keep the
 * machines' clocks in step).
 *
 * @example
 * ```ts
 * import { rateLimited } from 'troupe/adapters/rate-limit';
 * const state = redisRateLimitState({ connection: 'redis://127.0.0.1:6379', name: 'openai' });
 * const adapter = rateLimited(openaiAdapter({ model: 'gpt-4.1', maxRetries: 0 }), { requestsPerMinute: 500, state });
 * ```
 */
export function redisRateLimitState(options: RedisRateLimitStateOptions): RedisRateLimitState {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError(`Expected redisRateLimitState options, got ${describeValue(options)}`);
  redisRateLimitStateOptions.check(options);
  if (typeof options.name !== 'string' || options.name === '') throw new ConfigurationError(`Expected \`name\` to be a non-empty string, got ${describeValue(options.name)}`);
  const prefix = options.prefix ?? 'troupe:';
  if (typeof prefix !== 'string') throw new ConfigurationError(`Expected \`prefix\` to be a string, got ${describeValue(prefix)}`);
  const timeoutMs = expectPositiveNumber('timeoutMs', options.timeoutMs) ?? 10_000;
  const link = new RedisLink(options.connection, timeoutMs);
  // One hash tag: every key of the limiter lives in one Cluster slot.
  const base = `${prefix}rl:{${encodeURIComponent(options.name)}}:`;
  const keys = { requests: `${base}req`, tokens: `${base}tok`, counts: `${base}tokn`, leases: `${base}lease`, pause: `${base}pause`, buckets: `${base}bucket` };
  const clock = options.clock ?? realClock;
  /** Run one script within the time-out and the call's signal; failures are `StoreError`s. */
  const run = async <T>(what: string, signal: AbortSignal | undefined, command: (client: Awaited<ReturnType<RedisLink['ready']>>) => Promise<T>): Promise<T> => {
    throwIfAborted(signal);
    let cancel = () => {};
    const timeout = new Promise<never>((_, reject) => {
      cancel = clock.setTimer(() => reject(new StoreError(`Redis did not answer within ${timeoutMs} ms (${what} the rate limit "${options.name}")${link.describeFailure()}`, { details: { timeoutMs } })), timeoutMs);
    });
    try {
      return await raceAbort(Promise.race([link.ready().then(command), timeout]), signal);
    } catch (error) {
      if (signal?.aborted || error instanceof TroupeError) throw error;
      throw new StoreError(`Could not ${what} the rate limit "${options.name}" in Redis: ${errorMessage(error)}`, { cause: error });
    } finally {
      cancel();
    }
  };
  return {
    async acquire(r, { signal } = {}): Promise<AcquireResult> {
      const result = (await run('take from', signal, (client) =>
        client.eval(
          ACQUIRE,
          6,
          keys.requests,
          keys.tokens,
          keys.counts,
          keys.leases,
          keys.pause,
          keys.buckets,
          r.now,
          r.windowMs,
          r.limits.requestsPerMinute ?? 0,
          r.limits.tokensPerMinute ?? 0,
          r.limits.maxParallel ?? 0,
          r.tokens,
          r.leaseId,
          r.leaseExpiresAt,
          r.burstMs ?? 0,
        ),
      )) as [number, number?];
      const [waitMs, reason = 1] = result;
      return waitMs === 0 ? { ok: true } : { ok: false, waitMs, reason: REASONS[reason] ?? 'paused' };
    },
    async release(r, { signal } = {}) {
      await run('release', signal, (client) => client.eval(RELEASE, 5, keys.requests, keys.tokens, keys.counts, keys.leases, keys.buckets, r.leaseId, r.tokens, r.refused ? '1' : '0'));
    },
    async pause(p, { signal } = {}) {
      await run('pause', signal, (client) => client.eval(PAUSE, 1, keys.pause, p.until, Math.ceil(Math.max(p.until - p.now, 0) + p.windowMs)));
    },
    close: () => link.close(),
  };
}
