/**
 * The Redis a benchmark runs against: `REDIS_URL` when set, else a
 * redis-server started on a free port of 127.0.0.1 (stopped by `stop`).
 * Undefined, with one line saying so, when neither is available.
 */
import { findRedisServer, startRedisServer } from '../test/helpers/redis-server.js';

export interface BenchRedis {
  url: string;
  /** The process id of the redis-server this started (none for `REDIS_URL`). */
  pid?: number;
  /** Stop the server this started (nothing for `REDIS_URL`). */
  stop(): Promise<void>;
}

export async function benchRedis(): Promise<BenchRedis | undefined> {
  const given = process.env.REDIS_URL;
  if (given) return { url: given, stop: async () => {} };
  if (!findRedisServer()) {
    console.log('Skipped: no Redis (install redis-server or set REDIS_URL).');
    return undefined;
  }
  const server = await startRedisServer();
  return { url: server.url, ...(server.process.pid === undefined ? {} : { pid: server.process.pid }), stop: () => server.stop() };
}
