// Redis in test files: the target the global setup found (`redis-setup.ts`),
// unique key prefixes that are deleted after the file, and stores closed
// after each test.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, inject } from 'vitest';
import { deleteKeys, type RedisTestTarget } from './redis-server.js';

export * from './redis-server.js';

/** The Redis of this test run: `url` is null when the Redis tests are skipped. */
export function redisTarget(): RedisTestTarget {
  return inject('redis');
}

/** A maker of unique key prefixes (`t-<uuid>:`, or `{t-<uuid>}:` with `hashTag`) whose keys are deleted after the file. */
export function testPrefixes(url: string | null): (options?: { hashTag?: boolean }) => string {
  const made: string[] = [];
  afterAll(async () => {
    if (url) for (const prefix of made) await deleteKeys(url, prefix);
  });
  return (options = {}) => {
    const id = `t-${randomUUID()}`;
    const prefix = options.hashTag ? `{${id}}:` : `${id}:`;
    made.push(prefix);
    return prefix;
  };
}

/** Something that can be closed. */
interface Closable {
  close?(): Promise<void>;
  quit?(): Promise<unknown>;
  disconnect?(): void;
}

/** Register `thing` to be closed after the current test. */
export function closedAfterEach(): <T extends Closable>(thing: T) => T {
  const open: Closable[] = [];
  afterEach(async () => {
    for (const thing of open.splice(0)) {
      if (thing.close) await thing.close();
      else thing.disconnect?.();
    }
  });
  return (thing) => {
    open.push(thing);
    return thing;
  };
}
