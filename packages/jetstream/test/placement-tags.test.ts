import { describe, expect, it } from 'vitest';
import { placeReplicas, replacePeer, replacePeers, type NodeLoad, type Zones } from '../src/cluster/meta-placement.js';
import { PlacementMisfit, PlacementRules } from '../src/cluster/placement-tags.js';

const TAGS = new Map<number, string[]>([
  [1, ['az:1', 'ssd']],
  [2, ['az:2', 'ssd']],
  [3, ['az:3']],
  [4, ['az:1', 'ssd']],
  [5, ['ssd']],
]);
const node = (id: number): { id: number; tags: string[] } => ({ id, tags: TAGS.get(id) ?? [] });
const empty: NodeLoad = { replicas: new Map(), leaders: new Map() };
const all = [1, 2, 3, 4, 5];

function scope(tags: string[], uniqueTag?: string): { candidates: number[]; misfit: PlacementMisfit; rules: PlacementRules; zones?: Zones } {
  const rules = new PlacementRules({ tags, uniqueTag });
  const misfit = new PlacementMisfit();
  const candidates = all.filter((id) => rules.fits(node(id), misfit));
  return { candidates, misfit, rules, ...(rules.uniquePrefix !== undefined ? { zones: { zoneOf: (id: number) => rules.zoneOf(node(id)) } } : {}) };
}

describe('PlacementRules', () => {
  it('requires every tag, excludes !tags, compares without case', () => {
    expect(scope(['SSD']).candidates).toEqual([1, 2, 4, 5]);
    expect(scope(['ssd', 'az:2']).candidates).toEqual([2]);
    expect(scope(['!ssd']).candidates).toEqual([3]);
  });

  it('with unique_tag a node without the tag takes nothing; naming a tag of that prefix lifts it', () => {
    const s = scope([], 'az:');
    expect(s.candidates).toEqual([1, 2, 3, 4]);
    expect(s.misfit.uniqueTag).toBe(true);
    expect(scope(['az:1'], 'az:').rules.uniquePrefix).toBeUndefined();
  });

  it("names nats-server's reasons in its order", () => {
    const s = scope(['ssd', 'nvme']);
    expect(s.candidates).toEqual([]);
    expect(s.misfit.error().toJSON()).toEqual({ code: 400, err_code: 10005, description: "no suitable peers for placement, tags not matched ['nvme', 'ssd']" });
    const x = scope(['!az:3']);
    expect(x.misfit.error().description).toBe("no suitable peers for placement, tags excluded ['az:3']");
  });
});

describe('placement with zones', () => {
  it('places one replica per zone, least loaded first', () => {
    const s = scope(['ssd'], 'az:');
    expect(s.candidates).toEqual([1, 2, 4]);
    const load: NodeLoad = { replicas: new Map([[1, 5]]), leaders: new Map() };
    const peers = placeReplicas(2, s.candidates, load, s.zones)!;
    expect([...peers].sort()).toEqual([2, 4]);
    expect(placeReplicas(3, s.candidates, empty, s.zones)).toBeNull();
  });

  it('replacePeer keeps the survivors\' zones free of a second replica', () => {
    const s = scope([], 'az:');
    // 4 leaves a stream on 4 and 2: 1 shares 4's zone (allowed: 4 is gone), 3 is free too.
    const peers = replacePeer([4, 2], 4, s.candidates, { replicas: new Map([[3, 9]]), leaders: new Map() }, s.zones)!;
    expect(peers).toEqual([2, 1]);
    // 2 leaves [1, 2]: 4 is in 1's zone, so 3 takes it.
    expect(replacePeer([1, 2], 2, s.candidates, empty, s.zones)).toEqual([1, 3]);
  });

  it('replacePeers moves only the replicas that no longer fit, keeping the leader when it fits', () => {
    const s = scope(['az:2']);
    const fits = (id: number): boolean => s.rules.fits(node(id));
    expect(replacePeers([3], 1, s.candidates, empty, 3, fits)).toEqual([2]);
    const t = scope(['ssd'], 'az:');
    const fitsSsd = (id: number): boolean => t.rules.fits(node(id));
    // 3 has no ssd: replaced by 4 or 1 (zone az:1 is free once 3 goes? 2 holds az:2) — least loaded, id order.
    expect(replacePeers([2, 3], 2, t.candidates, empty, 2, fitsSsd, t.zones)).toEqual([2, 1]);
    // Unchanged when all fit.
    expect(replacePeers([1, 2], 2, t.candidates, empty, 1, fitsSsd, t.zones)).toEqual([1, 2]);
  });
});
