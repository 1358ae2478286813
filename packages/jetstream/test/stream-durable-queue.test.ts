import { describe, it, expect } from 'vitest';
import { DurableQueue, type DurableSink } from '../src/stream/durable-queue.js';
import { TurnBudget } from '../src/turn-budget.js';

interface Flush {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function flush(): Flush {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function recorder(): { sink: DurableSink; events: string[] } {
  const events: string[] = [];
  const sink: DurableSink = {
    stored: (seq, subject, reply) => events.push(`ok ${seq} ${subject} ${reply}`),
    failed: (seq, reply, err) => events.push(`fail ${seq} ${reply} ${String(err)}`),
  };
  return { sink, events };
}

const ticks = () => new Promise((r) => setImmediate(r));

describe('DurableQueue', () => {
  it('releases each message only when the flush it was pushed under resolves, in push order', async () => {
    const { sink, events } = recorder();
    const q = new DurableQueue(sink);
    const a = flush();
    const b = flush();
    q.push(1, 's.a', 'r1', a.promise);
    q.push(2, 's.b', 'r2', a.promise);
    q.push(3, 's.a', null, b.promise);
    q.push(4, 's.c', 'r4', b.promise);
    await ticks();
    expect(events).toEqual([]);
    expect(q.size).toBe(4);
    a.resolve();
    await ticks();
    expect(events).toEqual(['ok 1 s.a r1', 'ok 2 s.b r2']);
    b.resolve();
    await ticks();
    expect(events).toEqual(['ok 1 s.a r1', 'ok 2 s.b r2', 'ok 3 s.a null', 'ok 4 s.c r4']);
    expect(q.size).toBe(0);
  });

  it('starts a new group when the same promise comes back after it settled (an always-durable store)', async () => {
    const { sink, events } = recorder();
    const q = new DurableQueue(sink);
    const done = Promise.resolve();
    q.push(1, 's', 'r1', done);
    await ticks();
    q.push(2, 's', 'r2', done);
    q.push(3, 's', 'r3', done);
    await ticks();
    expect(events).toEqual(['ok 1 s r1', 'ok 2 s r2', 'ok 3 s r3']);
  });

  it('answers every message of a failed flush with the failure', async () => {
    const { sink, events } = recorder();
    const q = new DurableQueue(sink);
    const a = flush();
    q.push(1, 's', 'r1', a.promise);
    q.push(2, 's', 'r2', a.promise);
    a.reject(new Error('disk full'));
    await ticks();
    expect(events).toEqual(['fail 1 r1 Error: disk full', 'fail 2 r2 Error: disk full']);
  });

  it('keeps order across ring growth with messages still waiting', async () => {
    const { sink, events } = recorder();
    const q = new DurableQueue(sink);
    const first = flush();
    const second = flush();
    // More than the initial ring holds, split over two flushes, with the head away from slot 0.
    for (let i = 1; i <= 700; i++) q.push(i, 's', `r${i}`, first.promise);
    first.resolve();
    await ticks();
    const third = flush();
    for (let i = 701; i <= 3000; i++) q.push(i, 's', `r${i}`, i <= 2000 ? second.promise : third.promise);
    expect(q.size).toBe(2300);
    second.resolve();
    await ticks();
    expect(events.length).toBe(2000);
    third.resolve();
    await ticks();
    expect(events.length).toBe(3000);
    expect(events.every((e, i) => e === `ok ${i + 1} s r${i + 1}`)).toBe(true);
  });

  it('a message pushed while releasing waits for its own flush', async () => {
    const events: string[] = [];
    const later = flush();
    const q: DurableQueue = new DurableQueue({
      stored: (seq) => {
        events.push(`ok ${seq}`);
        if (seq === 1) q.push(2, 's', null, later.promise);
      },
      failed: () => events.push('fail'),
    });
    const a = flush();
    q.push(1, 's', null, a.promise);
    a.resolve();
    await ticks();
    expect(events).toEqual(['ok 1']);
    later.resolve();
    await ticks();
    expect(events).toEqual(['ok 1', 'ok 2']);
  });

  it('a chain of already-resolved flushes gives the event loop back once the turn budget is spent', async () => {
    const events: string[] = [];
    const budget = new TurnBudget(3);
    // Each stored message pushes the next one under a resolved flush: a microtask chain without end.
    const q: DurableQueue = new DurableQueue(
      {
        stored: (seq) => {
          events.push(`ok ${seq}`);
          if (seq < 10) q.push(seq + 1, 's', null, Promise.resolve());
        },
        failed: () => events.push('fail'),
      },
      budget,
    );
    let immediateRan = false;
    setImmediate(() => (immediateRan = true));
    q.push(1, 's', null, Promise.resolve());
    // Microtasks only: the chain stops at the budget instead of running to the end.
    for (let i = 0; i < 50; i++) await Promise.resolve();
    expect(immediateRan).toBe(false);
    expect(events).toEqual(['ok 1', 'ok 2', 'ok 3']);
    // Later turns go on where it stopped, in order.
    for (let i = 0; i < 20 && events.length < 10; i++) await ticks();
    expect(events).toEqual(Array.from({ length: 10 }, (_, i) => `ok ${i + 1}`));
    expect(q.size).toBe(0);
  });
});
