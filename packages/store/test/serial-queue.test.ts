import { describe, expect, it } from 'vitest';
import { KeyedSerialQueue, SerialQueue } from '../src/serial-queue.js';

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 1));

describe('SerialQueue', () => {
  it('runs tasks one at a time in order; a failure does not stop the next; pending counts queued and running', async () => {
    const q = new SerialQueue();
    const log: string[] = [];
    const a = q.run(async () => {
      log.push('a start');
      await tick();
      log.push('a end');
      throw new Error('a failed');
    });
    const b = q.run(async () => {
      log.push('b');
      return 2;
    });
    expect(q.pending).toBe(2);
    await expect(a).rejects.toThrow('a failed');
    await expect(b).resolves.toBe(2);
    await q.idle();
    expect(q.pending).toBe(0);
    expect(log).toEqual(['a start', 'a end', 'b']);
  });
});

describe('KeyedSerialQueue', () => {
  it('orders tasks per key, lets keys overlap, and a gate replaces waiting for the previous task', async () => {
    const q = new KeyedSerialQueue<string>();
    const log: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const x1 = q.run('x', async () => {
      await held;
      log.push('x1');
    });
    const x2 = q.run('x', async () => {
      log.push('x2');
    });
    await q.run('y', async () => {
      log.push('y1');
    });
    const gated = q.run('x', async () => log.push('x3 (gate did not wait)'), () => Promise.resolve());
    await gated;
    expect(log).toEqual(['y1', 'x3 (gate did not wait)']);
    release();
    await Promise.all([x1, x2]);
    await q.idleAll();
    expect(log).toEqual(['y1', 'x3 (gate did not wait)', 'x1', 'x2']);
  });
});
