// Runs the fault schedule against the cluster, one fault at a time: resolve the target (the current stream
// or meta leader, or a node picked by the seed), break it, hold, repair, then wait (bounded) until every
// stream has a leader and current replicas before the next fault. Every fault is recorded with its times.
import { JsAdmin, metaLeaderFromMonitor } from './js-admin.js';
import { FAULT_KINDS } from './fault-schedule.js';
import { sleep } from './sleep.js';

const RESTART_ATTEMPTS = 3;
const SETTLE_MAX_MS = 15_000;
const HEAL_ATTEMPTS = 10;

export class FaultInjector {
  /** @param leadersNow () => { stream: leader } as last seen (recorded with each fault: did it hit a leader?) */
  constructor({ cluster, admin, nodeConnections, streams, schedule, startMs, endMs, log, leadersNow = () => ({}) }) {
    Object.assign(this, { cluster, admin, nodeConnections, streams, schedule, startMs, endMs, log, leadersNow });
    this.done = []; // executed faults
    this.skipped = []; // { index, kind, reason }
    this.stopping = false;
    this.current = null;
    this.partitioned = new Set(); // nodes with a partition rule in force
  }

  nowMs() {
    return Date.now() - this.startMs;
  }

  async run() {
    for (const f of this.schedule) {
      if (this.stopping) return;
      const waitMs = f.atMs - this.nowMs();
      if (waitMs > 0) await this.sleepUnlessStopping(waitMs);
      if (this.stopping || Date.now() >= this.endMs) return;
      const need = FAULT_KINDS[f.kind].needs;
      if (need === 'partition' ? !this.cluster.supportsPartition : !this.cluster.supports(need === 'pause' ? 'pause' : 'kill')) {
        this.skipped.push({ index: f.index, kind: f.kind, reason: `cluster cannot ${need}` });
        continue;
      }
      await this.inject(f);
      await this.settle();
    }
  }

  async sleepUnlessStopping(ms) {
    const until = Date.now() + ms;
    while (!this.stopping && Date.now() < until) await sleep(Math.min(200, until - Date.now()));
  }

  async resolveTarget(f) {
    const up = this.cluster.nodes.filter((n) => this.cluster.isUp(n.name) && !this.cluster.isPaused(n.name));
    if (f.kind.endsWith('stream-leader')) {
      const stream = this.streams[Math.floor(f.streamPick * this.streams.length)];
      const leader = await this.admin.streamLeader(stream, 2_000);
      return leader ? { target: leader, stream } : { reason: `stream ${stream} has no leader` };
    }
    if (f.kind === 'kill-meta-leader') {
      const leader = await metaLeaderFromMonitor(this.cluster.nodes, (name) => this.cluster.isUp(name) && !this.cluster.isPaused(name));
      return leader ? { target: leader } : { reason: 'no meta leader reported (monitor /jsz)' };
    }
    if (up.length === 0) return { reason: 'no node up' };
    return { target: up[Math.floor(f.pick * up.length)].name };
  }

  async inject(f) {
    const t = await this.resolveTarget(f);
    if (!t.target) {
      this.skipped.push({ index: f.index, kind: f.kind, reason: t.reason });
      this.log(`fault #${f.index} ${f.kind} skipped: ${t.reason}`);
      return;
    }
    const leaders = this.leadersNow();
    if (t.stream) leaders[t.stream] = t.target;
    const rec = { index: f.index, kind: f.kind, target: t.target, stream: t.stream ?? null, leaderOf: this.streams.filter((s) => leaders[s] === t.target), holdMs: f.holdMs, startMs: this.nowMs(), endMs: null, error: null };
    this.current = rec;
    this.log(`fault #${f.index} ${f.kind} -> ${t.target}${t.stream ? ` (leader of ${t.stream})` : ''} for ${f.holdMs} ms`);
    try {
      if (f.kind.startsWith('kill')) {
        await this.cluster.kill(t.target);
        await this.sleepUnlessStopping(f.holdMs);
        await this.restart(t.target);
      } else if (f.kind === 'restart-random') {
        await this.cluster.stopNode(t.target);
        await this.sleepUnlessStopping(f.holdMs);
        await this.restart(t.target);
      } else if (f.kind.startsWith('pause')) {
        await this.cluster.pause(t.target);
        await this.sleepUnlessStopping(f.holdMs);
        await this.cluster.resume(t.target);
      } else if (f.kind.startsWith('partition')) {
        const others = this.cluster.nodes.map((n) => n.name).filter((n) => n !== t.target);
        this.partitioned.add(t.target);
        await JsAdmin.fault(this.nodeConnections.get(t.target), t.target, { op: 'partition', peers: others });
        await this.sleepUnlessStopping(f.holdMs);
        await this.healAll();
      }
    } catch (err) {
      rec.error = err.message;
      this.log(`fault #${f.index} ${f.kind}: ${err.message}`);
    }
    rec.endMs = this.nowMs();
    this.done.push(rec);
    this.current = null;
  }

  async restart(name) {
    for (let i = 1; ; i++) {
      try {
        await this.cluster.restart(name);
        return;
      } catch (err) {
        if (i >= RESTART_ATTEMPTS) throw err;
        await sleep(1_000);
      }
    }
  }

  /** Heals every node a partition was put on (retried: the node's connection may be reconnecting). */
  async healAll() {
    for (const name of [...this.partitioned]) {
      for (let attempt = 1; ; attempt++) {
        try {
          await JsAdmin.fault(this.nodeConnections.get(name), name, { op: 'heal' });
          this.partitioned.delete(name);
          break;
        } catch (err) {
          if (attempt >= HEAL_ATTEMPTS || !this.cluster.isUp(name)) {
            this.log(`heal ${name}: ${err.message}`);
            break;
          }
          await sleep(500);
        }
      }
    }
  }

  /**
   * Waits (bounded) until every stream reports a leader and every replica online and heard from lately.
   * (`current` alone flickers false under load on some servers, whenever a follower is an entry behind.)
   */
  async settle(maxMs = SETTLE_MAX_MS) {
    const deadline = Date.now() + maxMs;
    const healthyReplica = (r) => r.current || (!r.offline && typeof r.active === 'number' && r.active < 2e9 && (r.lag ?? 0) < 10_000);
    while (!this.stopping && Date.now() < deadline) {
      const infos = await Promise.all(this.streams.map((s) => this.admin.streamInfo(s, 1_000).catch(() => null)));
      const healthy = infos.every((i) => i?.cluster?.leader && (i.cluster.replicas ?? []).every(healthyReplica));
      if (healthy) return true;
      await sleep(250);
    }
    return false;
  }

  /** Undoes whatever is broken now: resume paused nodes, heal partitions, restart dead nodes. */
  async repairAll() {
    for (const n of this.cluster.nodes) {
      if (this.cluster.isPaused(n.name)) await this.cluster.resume(n.name).catch((err) => this.log(`resume ${n.name}: ${err.message}`));
    }
    await this.healAll();
    for (const n of this.cluster.nodes) {
      if (!this.cluster.isUp(n.name)) await this.restart(n.name).catch((err) => this.log(`restart ${n.name}: ${err.message}`));
    }
  }
}
