import { describe, expect, it } from 'vitest';
import { LeaderlessClock, designatedAnswerer } from '../src/cluster/clustered-jetstream-leaderless.js';

describe('leaderless groups: how long, and who answers for them', () => {
  it('counts from the first leaderless observation and restarts once a leader was seen', () => {
    let now = 1000;
    const clock = new LeaderlessClock(() => now);
    expect(clock.leaderlessForMs('g', true)).toBe(0);
    clock.observe('g', false);
    now += 2500;
    expect(clock.leaderlessForMs('g', false)).toBe(2500);
    clock.observe('g', true);
    now += 100;
    expect(clock.leaderlessForMs('g', false)).toBe(0);
    now += 700;
    expect(clock.leaderlessForMs('g', false)).toBe(700);
    clock.retain(new Set());
    expect(clock.leaderlessForMs('g', false)).toBe(0);
  });

  it('only the lowest linked member answers; an unlinked lower one does not count', () => {
    const linked = new Set([2, 3]);
    const active = (id: number) => linked.has(id);
    expect(designatedAnswerer([1, 2, 3], 2, active)).toBe(true);
    expect(designatedAnswerer([1, 2, 3], 3, active)).toBe(false);
    linked.add(1);
    expect(designatedAnswerer([1, 2, 3], 2, active)).toBe(false);
    expect(designatedAnswerer([5], 4, () => true)).toBe(true);
  });
});
