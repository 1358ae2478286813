// The meta leader's catalogue flickers "not settled" while a commit waits for its apply (one fsync) or its term's
// first entry commits; every other node stays silent then. A catalogue request arriving in that window used to
// be dropped by everyone (the client timed out after 10 s: js-cluster-basics "survives a full restart", whose
// STREAM.NAMES came while the new meta leader committed the restarted nodes' records). Now the leader holds it.
import { describe, it, expect, afterEach } from 'vitest';
import { SettlingRequests } from '../src/cluster/clustered-jetstream-settling.js';
import type { ClusteredJetStream } from '../src/cluster/clustered-jetstream.js';
import { InProcessCluster } from './meta-cluster-harness.js';

function queue(state: { settled: boolean; settling: boolean; nowMs: number }, maxHeld = 4): SettlingRequests {
  return new SettlingRequests({
    settled: () => state.settled,
    settling: () => state.settling,
    maxWaitMs: 1_000,
    pollMs: 60_000, // the tests call check() themselves
    maxHeld,
    nowMs: () => state.nowMs,
  });
}

describe('SettlingRequests', () => {
  it('answers held requests once settled, each exactly once', () => {
    const state = { settled: false, settling: true, nowMs: 0 };
    const q = queue(state);
    const log: string[] = [];
    q.hold(() => log.push('a1'), () => log.push('g1'));
    q.hold(() => log.push('a2'), () => log.push('g2'));
    q.check();
    expect(log).toEqual([]);
    state.settled = true;
    q.check();
    q.check();
    expect(log).toEqual(['a1', 'a2']);
    expect(q.size).toBe(0);
    q.stop();
  });

  it('gives up when leadership is lost, or after maxWaitMs', () => {
    const state = { settled: false, settling: true, nowMs: 0 };
    const q = queue(state);
    const log: string[] = [];
    q.hold(() => log.push('a1'), () => log.push('g1'));
    state.nowMs = 500;
    q.hold(() => log.push('a2'), () => log.push('g2'));
    state.nowMs = 1_000;
    q.check();
    expect(log).toEqual(['g1']);
    state.settling = false;
    q.check();
    expect(log).toEqual(['g1', 'g2']);
    expect(q.size).toBe(0);
    q.stop();
  });

  it('gives up at once beyond maxHeld', () => {
    const state = { settled: false, settling: true, nowMs: 0 };
    const q = queue(state, 1);
    const log: string[] = [];
    q.hold(() => log.push('a1'), () => log.push('g1'));
    q.hold(() => log.push('a2'), () => log.push('g2'));
    expect(log).toEqual(['g2']);
    expect(q.size).toBe(1);
    q.stop();
  });
});

let cluster: InProcessCluster | null = null;
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});

describe('meta leader whose catalogue is settling', () => {
  it('answers a catalogue request that arrived while a commit was not applied yet (nobody else would)', async () => {
    const c = (cluster = await InProcessCluster.start(3));
    await c.waitFor(async () => {
      const r = await c.request(1, '$JS.API.INFO', '', 300);
      return r.length === 1 && r[0]!['error'] === undefined;
    });
    const leaderName = c.services[0]!.cluster!.metaLeaderName();
    const leaderIndex = ['n1', 'n2', 'n3'].indexOf(leaderName);
    expect(leaderIndex).toBeGreaterThanOrEqual(0);
    const meta = (c.services[leaderIndex]!.cluster as unknown as ClusteredJetStream).meta;
    // The window between commit and apply, held open for 300 ms: still the Raft leader, catalogue not settled.
    const settled = meta.isLeader.bind(meta);
    let unsettledUntilMs = Date.now() + 300;
    meta.isLeader = () => Date.now() >= unsettledUntilMs && settled();
    const via = ((leaderIndex + 1) % 3) + 1;
    const started = Date.now();
    const names = await c.request(via, '$JS.API.STREAM.NAMES', '', 1_000);
    expect(names).toEqual([{ type: 'io.nats.jetstream.api.v1.stream_names_response', total: 0, offset: 0, limit: 1024, streams: null }]);
    // Unknown stream: the leader says so once settled, as when settled all along.
    unsettledUntilMs = Date.now() + 300;
    const missing = await c.request(via, '$JS.API.STREAM.INFO.NOPE', '', 1_000);
    expect(missing.map((r) => (r['error'] as { err_code: number }).err_code)).toEqual([10059]);
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);
});
