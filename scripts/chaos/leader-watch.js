// Polls who leads each stream (STREAM.INFO) and the meta group (monitor /jsz) and counts leader changes:
// an "election" here is a new leader name different from the last one seen (a re-election of the same
// node is invisible to a client, so this is a lower bound).
import { metaLeaderFromMonitor } from './js-admin.js';
import { sleep } from './sleep.js';

export class LeaderWatch {
  constructor({ admin, cluster, streams, intervalMs = 500 }) {
    Object.assign(this, { admin, cluster, streams, intervalMs });
    this.leaders = new Map(); // group ('meta' or stream) -> last non-null leader
    this.current = new Map(); // group -> leader now (null while leaderless)
    this.elections = new Map(); // group -> count
    this.stopping = false;
  }

  observe(group, leader) {
    this.current.set(group, leader);
    if (!leader) return;
    const last = this.leaders.get(group);
    if (last !== undefined && last !== leader) this.elections.set(group, (this.elections.get(group) ?? 0) + 1);
    this.leaders.set(group, leader);
  }

  async run() {
    while (!this.stopping) {
      const began = Date.now();
      const live = (name) => this.cluster.isUp(name) && !this.cluster.isPaused(name);
      const [meta, ...streamLeaders] = await Promise.all([
        metaLeaderFromMonitor(this.cluster.nodes, live),
        ...this.streams.map((s) => this.admin.streamLeader(s, 1_000)),
      ]);
      this.observe('meta', meta);
      this.streams.forEach((s, i) => this.observe(s, streamLeaders[i]));
      const spare = this.intervalMs - (Date.now() - began);
      if (spare > 0) await sleep(spare);
    }
  }

  summary() {
    return Object.fromEntries(['meta', ...this.streams].map((g) => [g, this.elections.get(g) ?? 0]));
  }
}
