// Redis servers for tests: a real `redis-server` (Debian's `redis-server`
// package) started on a free port of 127.0.0.1 in a temporary folder, with no
// persistence, and stopped afterwards. No vitest import here: the global setup
// (`redis-setup.ts`) uses it too. Test files use `redis.ts`.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Redis } from 'ioredis';

/** What the global setup found: where the tests' Redis is, and whether they can start their own servers. */
export interface RedisTestTarget {
  /** URL of the Redis the tests share; null when the Redis tests are skipped. */
  url: string | null;
  /** Path of `redis-server`, for tests that stop and restart a server of their own; null when absent. */
  binary: string | null;
}

declare module 'vitest' {
  export interface ProvidedContext {
    redis: RedisTestTarget;
  }
}

/** How to enable the Redis tests, for the skip line. */
export const ENABLE_REDIS = 'install redis-server (apt-get install redis-server) or set REDIS_URL=redis://127.0.0.1:6379';

/** The path of `redis-server` on PATH (or REDIS_SERVER), or undefined. */
export function findRedisServer(): string | undefined {
  const candidates = process.env.REDIS_SERVER ? [process.env.REDIS_SERVER] : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, 'redis-server'));
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A `redis-server` process started by a test. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** Stop it (SIGTERM, then SIGKILL after 5 s) and remove its folder. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** A free TCP port on 127.0.0.1 (free when asked; redis-server binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Start `redis-server` on 127.0.0.1 in a temporary folder, with no
 * persistence (`--save ''`, no AOF) and in the foreground, and resolve once it
 * accepts connections. `port` reuses a port (to restart a stopped server).
 */
export async function startRedisServer(options: { binary?: string; port?: number; args?: string[] } = {}): Promise<RedisServer> {
  const binary = options.binary ?? findRedisServer();
  if (!binary) throw new Error(`redis-server not found: ${ENABLE_REDIS}`);
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    try {
      return await launch(binary, port, options.args ?? []);
    } catch (error) {
      // Another process took the port between freePort() and the bind: try another one.
      if (options.port !== undefined || attempt >= 5 || !/already in use|bind/i.test(String(error))) throw error;
    }
  }
}

function launch(binary: string, port: number, extra: string[]): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', '', '--loglevel', 'notice', ...extra];
  const child = spawn(binary, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Never leave a server behind, even when the test process ends abruptly.
    process.once('exit', () => {
      for (const c of running) c.kill('SIGKILL');
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => {
    running.delete(child);
    rmSync(dir, { recursive: true, force: true });
  });
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return new Promise<RedisServer>((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => fail(new Error(`redis-server did not start within 10 s:\n${log}`)), 10_000);
    const onData = (chunk: Buffer) => {
      log += chunk.toString('utf8');
      if (log.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve(server);
      }
    };
    const fail = (error: Error) => {
      clearTimeout(timer);
      void server.stop().then(() => reject(error));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`redis-server exited (${signal ?? code}) before it was ready:\n${log}`)));
  });
}

/** A Redis Cluster of `masters` servers started by a test (no replicas). */
export interface RedisClusterServers {
  /** Host and port of every master. */
  readonly nodes: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
}

/**
 * Start `masters` redis-servers in cluster mode, give each an equal range of
 * the 16384 slots, join them (`CLUSTER MEET`) and resolve once every node
 * reports `cluster_state:ok`.
 */
export async function startRedisCluster(options: { binary?: string; masters?: number } = {}): Promise<RedisClusterServers> {
  const masters = options.masters ?? 3;
  const servers: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  try {
    for (let i = 0; i < masters; i++) {
      const args = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '5000'];
      servers.push(await startRedisServer({ ...(options.binary ? { binary: options.binary } : {}), args }));
    }
    const clients = servers.map((s) => new Redis(s.url, { maxRetriesPerRequest: 0 }));
    try {
      const size = Math.ceil(16384 / masters);
      await Promise.all(clients.map((c, i) => c.call('CLUSTER', 'ADDSLOTSRANGE', String(i * size), String(Math.min(16383, (i + 1) * size - 1)))));
      for (const s of servers.slice(1)) await clients[0]!.call('CLUSTER', 'MEET', '127.0.0.1', String(s.port));
      const deadline = Date.now() + 20_000;
      for (;;) {
        const infos = await Promise.all(clients.map((c) => c.call('CLUSTER', 'INFO') as Promise<string>));
        if (infos.every((info) => info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${masters}`))) break;
        if (Date.now() > deadline) throw new Error(`the cluster did not become ready:\n${infos.join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      for (const c of clients) c.disconnect();
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes: servers.map((s) => ({ host: '127.0.0.1', port: s.port })), stop };
}

/** Answer a PING within `timeoutMs`, or throw. */
export async function pingRedis(url: string, timeoutMs = 3000): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } finally {
    client.disconnect();
  }
}

/** Delete every key that starts with `prefix` (SCAN, then DEL): tests clean up after themselves on a user's Redis. */
export async function deleteKeys(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}
