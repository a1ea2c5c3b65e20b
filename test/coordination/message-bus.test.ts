import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/clock.js';
import { CancelledError } from '../../src/core/errors.js';
import { MessageBus, type CoordMessage } from '../../src/coordination/message-bus.js';

describe('MessageBus', () => {
  it('stamps messages with the clock, queues them per recipient and drains them on poll', async () => {
    const clock = new SimulatedClock(1000);
    const seen: CoordMessage[] = [];
    const bus = new MessageBus({ clock, onMessage: (m) => seen.push(m) });
    bus.send({ kind: 'question', sender: 'w1', recipient: 'lead', text: 'Which file?', taskId: 't1', metadata: { urgent: true } });
    await clock.advance(5);
    bus.send({ kind: 'status', sender: 'w2', recipient: 'lead', text: 'Started.' });
    expect(bus.peek('lead')).toHaveLength(2);
    expect(bus.poll('lead')).toEqual([
      { id: 'm1', time: 1000, kind: 'question', sender: 'w1', recipient: 'lead', text: 'Which file?', taskId: 't1', metadata: { urgent: true } },
      { id: 'm2', time: 1005, kind: 'status', sender: 'w2', recipient: 'lead', text: 'Started.' },
    ]);
    expect(bus.poll('lead')).toEqual([]);
    expect(seen.map((m) => m.id)).toEqual(['m1', 'm2']);
    expect(bus.history()).toHaveLength(2);
  });

  it('awaits the next message, and rejects when the signal aborts', async () => {
    const bus = new MessageBus({ clock: new SimulatedClock() });
    const next = bus.next('w1');
    bus.send({ kind: 'text', sender: 'lead', recipient: 'w2', text: 'not for w1' });
    bus.send({ kind: 'answer', sender: 'lead', recipient: 'w1', text: 'src/a.ts' });
    expect(await next).toMatchObject({ kind: 'answer', text: 'src/a.ts' });
    expect(await bus.next('w2')).toMatchObject({ text: 'not for w1' }); // queued one at once
    const controller = new AbortController();
    const waiting = bus.next('w1', { signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(CancelledError);
    bus.send({ kind: 'text', sender: 'lead', recipient: 'w1', text: 'kept' });
    expect(bus.poll('w1').map((m) => m.text)).toEqual(['kept']); // the aborted waiter did not swallow it
  });
});
