// The STATSZ heartbeat's schedule as nats-server 2.14 runs it (startStatszTimer, heartbeatStatsz,
// limitStatsz): 250 ms, then the interval doubling per beat to 10 s, within a min(1 s, interval) rate window.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StatszHeartbeat } from '../src/system-account/statsz-heartbeat.js';

let sentAtMs: number[];
let hb: StatszHeartbeat;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  sentAtMs = [];
  hb = new StatszHeartbeat(() => sentAtMs.push(performance.now()));
});

afterEach(() => {
  hb.stop();
  vi.useRealTimers();
});

describe('StatszHeartbeat', () => {
  it('beats at 250 ms, 1.25 s, 3.25 s, 7.25 s, 15.25 s, then every 10 s (the 750 ms beat falls in the 1 s window)', () => {
    const t0 = performance.now();
    hb.start();
    vi.advanceTimersByTime(45_300);
    expect(sentAtMs.map((t) => Math.round(t - t0))).toEqual([250, 1250, 3250, 7250, 15250, 25250, 35250, 45250]);
  });

  it('broadcast(): sent at once outside the window, held to its end inside it; broadcastNow() clears it', () => {
    const t0 = performance.now();
    hb.start();
    vi.advanceTimersByTime(4000); // beats at 250, 1250, 3250; the next is due at 7250
    hb.broadcast(); // 750 ms after the last beat: inside the min(1 s, 4 s) window, so held
    expect(sentAtMs).toHaveLength(3);
    vi.advanceTimersByTime(300); // the window ends at 4250: the held beat goes then (and the timer restarts from it, as nats-server resets it)
    expect(sentAtMs.map((t) => Math.round(t - t0))).toEqual([250, 1250, 3250, 4250]);
    hb.broadcastNow(); // a reply-less PING.STATSZ: at once, window or not
    expect(sentAtMs).toHaveLength(5);
  });

  it('stop(): no beat after it', () => {
    hb.start();
    vi.advanceTimersByTime(300);
    hb.stop();
    vi.advanceTimersByTime(60_000);
    hb.broadcastNow();
    expect(sentAtMs).toHaveLength(1);
  });
});
