import type { TroupeEvent } from '../../src/core/events.js';
import type { Store } from '../../src/core/store.js';
import { memoryStore } from '../../src/core/memory-store.js';

/**
 * A memory store that keeps every state a pattern's checkpoint saved, in
 * order (`states`), and a kill switch: `signal` aborts once `kind` saved
 * its checkpoint `killAfter` times (pass `onEvent` to the run).
 */
export interface CheckpointRecorder<S> {
  store: Store;
  states: S[];
  signal: AbortSignal;
  onEvent: (e: TroupeEvent) => void;
}

export function checkpointRecorder<S>(kind: string, killAfter = Number.POSITIVE_INFINITY): CheckpointRecorder<S> {
  const inner = memoryStore();
  const states: S[] = [];
  const controller = new AbortController();
  let saves = 0;
  const store: Store = {
    get: (key, options) => inner.get(key, options),
    set: (key, value, options) => {
      const doc = value as { kind?: string; state?: S; outcome?: unknown };
      if (key.includes('/checkpoints/') && doc.kind === kind && doc.outcome === undefined) states.push(JSON.parse(JSON.stringify(doc.state)) as S);
      return inner.set(key, value, options);
    },
    delete: (key, options) => inner.delete(key, options),
    list: (prefix, options) => inner.list(prefix, options),
    append: (stream, record, options) => inner.append(stream, record, options),
    read: (stream, options) => inner.read(stream, options),
  };
  const onEvent = (e: TroupeEvent) => void (e.type === 'checkpoint.saved' && e.kind === kind && !e.finished && ++saves === killAfter && controller.abort());
  return { store, states, signal: controller.signal, onEvent };
}
