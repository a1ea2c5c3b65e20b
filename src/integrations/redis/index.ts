/**
 * `troupe/redis`: a {@link Store} on Redis (`ioredis`, an optional peer
 * dependency), shared by every process that uses the same Redis and prefix.
 * @module troupe/redis
 * @category Integrations
 */
export { redisStore, encodeRedisKey, decodeRedisKey, type RedisStore, type RedisStoreOptions } from './store.js';
export type { RedisClient, RedisConnection } from './connection.js';
export { redisRateLimitState, type RedisRateLimitState, type RedisRateLimitStateOptions } from './rate-limit.js';
