// vitest global setup: find the Redis for this run once. REDIS_URL wins;
// else a redis-server started here (stopped at the end); else the Redis
// tests are skipped with one line saying how to enable them, unless
// TROUPE_REQUIRE_REDIS=1 (CI), which makes a missing Redis an error.
import type { TestProject } from 'vitest/node';
import { ENABLE_REDIS, findRedisServer, pingRedis, startRedisServer, type RedisServer } from './redis-server.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const required = process.env.TROUPE_REQUIRE_REDIS === '1';
  const binary = findRedisServer() ?? null;
  let server: RedisServer | undefined;
  let url: string | null = null;
  if (process.env.REDIS_URL) {
    url = process.env.REDIS_URL;
    await pingRedis(url).catch((error: unknown) => {
      throw new Error(`REDIS_URL=${url} does not answer: ${String(error)}`);
    });
  } else if (binary) {
    server = await startRedisServer({ binary });
    url = server.url;
  }
  if (required && !(url && binary)) {
    throw new Error(`TROUPE_REQUIRE_REDIS=1 but the Redis tests would be skipped (redis-server not found): ${ENABLE_REDIS}`);
  }
  if (!url) console.warn(`\n⚠ Redis tests skipped: redis-server not found. To run them, ${ENABLE_REDIS}.\n`);
  else if (!binary) console.warn(`\n⚠ Redis tests that stop and restart a server skipped: redis-server not found (apt-get install redis-server).\n`);
  project.provide('redis', { url, binary });
  return async () => {
    await server?.stop();
  };
}
