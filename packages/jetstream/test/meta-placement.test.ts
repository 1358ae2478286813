import { describe, it, expect } from 'vitest';
import { placeReplicas, replacePeer, resizePeers, type NodeLoad } from '../src/cluster/meta-placement.js';

function load(replicas: Record<number, number>, leaders: Record<number, number> = {}): NodeLoad {
  const m = (o: Record<number, number>) => new Map(Object.entries(o).map(([k, v]) => [Number(k), v]));
  return { replicas: m(replicas), leaders: m(leaders) };
}

describe('placement', () => {
  it('picks the least-loaded nodes, preferred leader the one leading fewest', () => {
    expect(placeReplicas(3, [1, 2, 3, 4], load({ 1: 5, 2: 0, 3: 1, 4: 1 }, { 3: 1 }))).toEqual([2, 4, 3]);
    expect(placeReplicas(1, [1, 2, 3], load({ 1: 1, 2: 1, 3: 0 }))).toEqual([3]);
    // Ties break by id, so every meta leader places the same way.
    expect(placeReplicas(2, [3, 2, 1], load({}))).toEqual([1, 2]);
  });

  it('refuses more replicas than candidates', () => {
    expect(placeReplicas(5, [1, 2, 3], load({}))).toBeNull();
    expect(placeReplicas(4, [1, 2, 3, 3], load({}))).toBeNull();
    expect(placeReplicas(0, [1], load({}))).toBeNull();
  });

  it('grows with free nodes and shrinks keeping the leader', () => {
    expect(resizePeers([2], 3, [1, 2, 3, 4], load({ 1: 3, 3: 0, 4: 1 }), 2)).toEqual([2, 3, 4]);
    expect(resizePeers([2], 3, [1, 2], load({}), 2)).toBeNull();
    expect(resizePeers([1, 2, 3], 1, [1, 2, 3], load({}), 3)).toEqual([3]);
    expect(resizePeers([1, 2, 3], 2, [1, 2, 3], load({}), 3)).toEqual([1, 3]);
    expect(resizePeers([1, 2, 3], 3, [1], load({}), 1)).toEqual([1, 2, 3]);
  });

  it('replaces a removed peer with a free node, else shrinks', () => {
    expect(replacePeer([1, 2, 3], 2, [1, 2, 3, 4, 5], load({ 4: 2, 5: 1 }))).toEqual([1, 3, 5]);
    expect(replacePeer([1, 2, 3], 1, [1, 2, 3], load({}))).toEqual([2, 3]);
    expect(replacePeer([1], 1, [1], load({}))).toBeNull();
  });
});
