/**
 * The message bus of a lead coordination (typed messages between the lead
 * and its workers) and of a plan's workers, stamped with the injected
 * clock, polled or awaited. In the core so both layers share it.
 * @module
 */
import { abortError } from './clock.js';
import type { Clock } from './clock.js';
import { clock, defineOptions, func, required } from './options.js';

/** Kinds of messages between the lead and its workers. */
export type MessageKind =
  | 'status'
  | 'question'
  | 'answer'
  | 'plan-submission'
  | 'plan-approval'
  | 'text'
  | 'shutdown-request'
  | 'shutdown-response';

/** A message between the lead and a worker (as `coord.message` events carry it). */
export interface CoordMessage {
  /** Unique within the bus. */
  id: string;
  kind: MessageKind;
  /** The lead's or a worker's name. */
  sender: string;
  recipient: string;
  /** Clock time it was sent. */
  time: number;
  text: string;
  /** The task it is about. */
  taskId?: string | undefined;
  /** For `plan-approval`: the verdict. */
  approved?: boolean | undefined;
  /** The message it answers. */
  inReplyTo?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** What {@link MessageBus.send} accepts: a message without id and time. */
export type MessageInput = Omit<CoordMessage, 'id' | 'time'>;

/** Options of {@link MessageBus}. */
export interface MessageBusOptions {
  /** Stamps `time`. */
  clock: Clock;
  /** Called for every message sent (the coordination turns these into `coord.message` events). */
  onMessage?: (message: CoordMessage) => void;
}

/** The description {@link MessageBus} checks its options against. */
const messageBusOptions = defineOptions<MessageBusOptions>('MessageBus', { clock: required(clock), onMessage: func });

interface Waiter {
  recipient: string;
  resolve: (message: CoordMessage) => void;
}

/**
 * A mailbox per recipient. `send` delivers at once to a waiting `next`, else
 * queues; `poll` drains a mailbox; `next` awaits the next message.
 *
 * @example
 * ```ts
 * const bus = new MessageBus({ clock });
 * bus.send({ kind: 'question', sender: 'w1', recipient: 'lead', text: 'Which file?' });
 * const [question] = bus.poll('lead');
 * ```
 */
export class MessageBus {
  readonly #options: MessageBusOptions;
  readonly #boxes = new Map<string, CoordMessage[]>();
  #waiters: Waiter[] = [];
  readonly #history: CoordMessage[] = [];
  #next = 1;

  constructor(options: MessageBusOptions) {
    this.#options = messageBusOptions.check(options);
  }

  /** Send a message; returns it with its id and time. */
  send(input: MessageInput): CoordMessage {
    const message: CoordMessage = { id: `m${this.#next++}`, time: this.#options.clock.now(), ...stripUndefined(input) } as CoordMessage;
    this.#history.push(message);
    this.#options.onMessage?.(message);
    const waiter = this.#waiters.find((w) => w.recipient === message.recipient);
    if (waiter) {
      this.#waiters = this.#waiters.filter((w) => w !== waiter);
      waiter.resolve(message);
    } else {
      const box = this.#boxes.get(message.recipient) ?? [];
      box.push(message);
      this.#boxes.set(message.recipient, box);
    }
    return message;
  }

  /** Take every queued message of `recipient`, oldest first. */
  poll(recipient: string): CoordMessage[] {
    const box = this.#boxes.get(recipient) ?? [];
    this.#boxes.delete(recipient);
    return box;
  }

  /** Queued messages of `recipient`, left in place. */
  peek(recipient: string): readonly CoordMessage[] {
    return [...(this.#boxes.get(recipient) ?? [])];
  }

  /** The next message of `recipient`: a queued one at once, else the next sent. Rejects when `signal` aborts. */
  next(recipient: string, options: { signal?: AbortSignal } = {}): Promise<CoordMessage> {
    const { signal } = options;
    const queued = this.#boxes.get(recipient);
    if (queued && queued.length > 0) {
      const message = queued.shift()!;
      if (queued.length === 0) this.#boxes.delete(recipient);
      return Promise.resolve(message);
    }
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<CoordMessage>((resolve, reject) => {
      const onAbort = () => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(abortError(signal));
      };
      const waiter: Waiter = {
        recipient,
        resolve: (message) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(message);
        },
      };
      this.#waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Every message sent, oldest first. */
  history(): CoordMessage[] {
    return [...this.#history];
  }
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
