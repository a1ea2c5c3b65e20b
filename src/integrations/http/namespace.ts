/**
 * Tenants: a namespace in every store key, stream and queue name. The HTTP
 * handlers put each principal's tenant in front of everything they read or
 * write, so nothing below them knows about principals.
 * @module
 */
import type { Store } from '../../core/store.js';
import { checkId } from './ids.js';

/** The key prefix of a tenant: `tenants/<tenant>/`. */
export function tenantPrefix(tenant: string): string {
  checkId('tenant', tenant);
  return `tenants/${tenant}/`;
}

/**
 * A queue (or channel) name in a tenant's namespace: `<name>.t.<tenant>`.
 * Queue-backed executors name their queues with it, so workers of one
 * tenant never take another's jobs.
 *
 * @example
 * ```ts
 * namespacedName('acme', 'troupe-chunks'); // 'troupe-chunks.t.acme'
 * ```
 */
export function namespacedName(tenant: string, name: string): string {
  checkId('tenant', tenant);
  return `${name}.t.${tenant}`;
}

/**
 * The same store, seen through one tenant's namespace: every key and stream
 * gets `tenants/<tenant>/` in front, and `list` returns keys without it, so
 * code given this store (runs, checkpoints, run logs, the team registry,
 * approvals) reads and writes only that tenant's data. Compare-and-set and
 * `deleteStream` are kept when the store has them.
 *
 * @example
 * ```ts
 * const store = namespacedStore(fileStore('.troupe'), principal.tenant);
 * await run(flow, input, { store });
 * ```
 */
export function namespacedStore(store: Store, tenant: string): Store {
  const prefix = tenantPrefix(tenant);
  const k = (key: string): string => prefix + key;
  const scoped: Store = {
    get: (key, options) => store.get(k(key), options),
    set: (key, value, options) => store.set(k(key), value, options),
    delete: (key, options) => store.delete(k(key), options),
    list: async (p, options) => (await store.list(k(p), options)).filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length)),
    append: (stream, record, options) => store.append(k(stream), record, options),
    read: (stream, options) => store.read(k(stream), options),
  };
  if (store.deleteStream) {
    const deleteStream = store.deleteStream.bind(store);
    scoped.deleteStream = (stream, options) => deleteStream(k(stream), options);
  }
  if (store.getVersioned && store.setIf) {
    const getVersioned = store.getVersioned.bind(store);
    const setIf = store.setIf.bind(store);
    scoped.getVersioned = (key, options) => getVersioned(k(key), options);
    scoped.setIf = (key, value, options) => setIf(k(key), value, options);
  }
  return scoped;
}
