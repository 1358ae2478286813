// `npm run bench -- raft [--seconds 10] [--batch 2000] [--inflight 8]`
// Three in-process RaftNodes on the in-memory transport, each with its own LevelDB RaftLogStore (fsynced):
// committed 128 B proposals/s, fsyncs/s, share of wall time in synced writes, commit latency p50/p99.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryNetwork, RaftNode } from '@flotilla/raft';
import { LevelRaftLogStore } from '@flotilla/store';

function parse(args) {
  const opts = { seconds: 10, batch: 2000, inflight: 8 };
  for (let i = 0; i < args.length; i += 2) {
    const key = args[i]?.replace(/^--/, '');
    if (!(key in opts)) throw new Error(`unknown option ${args[i]}`);
    opts[key] = Number(args[i + 1]);
  }
  return opts;
}

class CounterMachine {
  count = 0;
  bytes = 0;
  apply(entry) {
    this.count++;
    this.bytes += entry.data.length;
    return this.count;
  }
  snapshot() {
    return new TextEncoder().encode(JSON.stringify({ count: this.count, bytes: this.bytes }));
  }
  restore(data) {
    Object.assign(this, JSON.parse(new TextDecoder().decode(data)));
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export async function main(args) {
  const opts = parse(args);
  const root = await mkdtemp(join(tmpdir(), 'flotilla-bench-raft-'));
  const net = new InMemoryNetwork();
  const ids = [1, 2, 3];
  const stores = [];
  const nodes = [];
  try {
    for (const id of ids) {
      const store = await LevelRaftLogStore.open({ dir: join(root, `node${id}`) });
      stores.push(store);
      nodes.push(
        await RaftNode.start({
          group: 'bench',
          id,
          peers: ids,
          store,
          transport: net.transport(),
          stateMachine: new CounterMachine(),
          tickMs: 50,
          snapshotEveryEntries: 200, // entries are packed batches of --batch proposals
          raft: { electionTicks: 10, maxInflight: 256, maxMsgEntries: 8192, maxMsgBytes: 4 << 20 },
        }),
      );
    }
    let leader;
    for (let i = 0; i < 400 && !leader; i++) {
      leader = nodes.find((n) => n.isLeader());
      if (!leader) await new Promise((r) => setTimeout(r, 10));
    }
    if (!leader) throw new Error('no leader elected');
    // Incompressible payloads (a fixed xorshift stream), one distinct 128 B proposal per slot of a batch.
    let x = 0x2545f491;
    const batchItems = Array.from({ length: opts.batch }, () => {
      const p = new Uint8Array(128);
      for (let i = 0; i < p.length; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        p[i] = x & 0xff;
      }
      return p;
    });
    const latencies = [];
    let committed = 0;
    const before = stores.map((s) => ({ ...s.stats }));
    const started = performance.now();
    const deadline = started + opts.seconds * 1000;
    const worker = async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await leader.proposeBatch(batchItems);
        latencies.push(performance.now() - t0);
        committed += batchItems.length;
      }
    };
    await Promise.all(Array.from({ length: opts.inflight }, worker));
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const syncs = stores.reduce((sum, s, i) => sum + s.stats.syncedBatches - before[i].syncedBatches, 0);
    const syncMs = stores.reduce((sum, s, i) => sum + s.stats.syncedBatchMs - before[i].syncedBatchMs, 0);
    const writes = stores.reduce((sum, s, i) => sum + s.stats.writes - before[i].writes, 0);
    const rows = [
      ['nodes', '3 in-process, in-memory transport, LevelDB log per node (synced)'],
      ['proposal size', '128 B'],
      ['client', `${opts.inflight} concurrent batches of ${opts.batch} proposals`],
      ['duration', `${seconds.toFixed(1)} s`],
      ['committed proposals/s', Math.round(committed / seconds).toLocaleString('en-US')],
      ['fsyncs/s (all nodes)', Math.round(syncs / seconds).toLocaleString('en-US')],
      ['fsyncs/s per node', Math.round(syncs / seconds / 3).toLocaleString('en-US')],
      ['log writes per synced batch', (writes / Math.max(1, syncs)).toFixed(2)],
      ['time in synced writes', `${((syncMs / 3 / (seconds * 1000)) * 100).toFixed(0)} % of wall time per node`],
      ['commit latency p50', `${percentile(latencies, 50).toFixed(1)} ms (per batch)`],
      ['commit latency p99', `${percentile(latencies, 99).toFixed(1)} ms (per batch)`],
    ];
    const width = Math.max(...rows.map((r) => r[0].length));
    console.log('raft bench');
    for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    await Promise.all(stores.map((s) => s.close()));
    await rm(root, { recursive: true, force: true });
  }
}
