import { isVoter } from '../membership.js';
import type { RaftTestBugs } from '../options.js';
import { SeededRandom } from '../seeded-random.js';
import { type Entry, EntryType, type Message, MessageType, type NodeId, Role } from '../types.js';
import type { RaftCore } from '../raft-core.js';
import { SimNetwork } from './sim-network.js';
import { SimNode, type SimStateMachine } from './sim-node.js';

export interface SimOptions {
  seed: number;
  /** Initial voters; one more spare node joins and leaves through membership changes. */
  nodes?: number;
  /** Steps (ticks) with faults, before the healed liveness phase. */
  steps?: number;
  /** Ticks allowed after healing for a leader to be elected and a proposal to commit everywhere. */
  livenessTicks?: number;
  bugs?: RaftTestBugs;
}

export interface SimResult {
  seed: number;
  violations: string[];
  /** Proposals reported committed to the client. */
  acknowledged: number;
  ticks: number;
  replay: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function replayCommand(options: SimOptions): string {
  const bugs = Object.entries(options.bugs ?? {})
    .filter(([, on]) => on)
    .map(([name]) => ` --bug ${name}`)
    .join('');
  return `npm run sim -- --seed ${options.seed} --nodes ${options.nodes ?? 3} --steps ${options.steps ?? 300}${bugs}`;
}

/**
 * One seeded run: a cluster under network faults, crashes that lose unsynced writes, restarts, proposals,
 * snapshots, membership changes and leader transfers, with Raft's safety invariants checked after every step
 * and liveness checked once the faults heal.
 */
export function simulate(options: SimOptions): SimResult {
  const run = new SimulationRun(options);
  return run.run();
}

class SimulationRun {
  private readonly random: SeededRandom;
  private readonly nodes: SimNode[] = [];
  private readonly net: SimNetwork;
  private readonly violations: string[] = [];
  private now = 0;
  private readonly steps: number;
  private readonly livenessTicks: number;
  /** term -> leader id (election safety). */
  private readonly leaders = new Map<number, NodeId>();
  /** index -> term of the committed entry, and the lowest term at which it was seen committed. */
  private readonly committedTerm: number[] = [];
  private readonly committedSeenAt: number[] = [];
  private readonly commitSeen = new Map<NodeId, number>();
  private readonly checkedTo = new Map<NodeId, { core: object; index: number; term: number }>();
  /** index -> state machine hash after applying it (state-machine safety). */
  private readonly hashAt = new Map<number, number>();
  /** (index, term) -> identity of the entry and its predecessor's term (log matching). */
  private readonly entryIdentity = new Map<string, string>();
  /** Proposals the client was told are committed: value -> index. */
  private readonly acked = new Map<string, number>();
  private readonly proposedValues = new Set<string>();
  private proposalCounter = 0;
  private crashRate: number;
  private partitionRate: number;
  private faultsOn = true;
  /** Per core (a restart makes a new one): the tick each heartbeat round was sent (leader lease). */
  private readonly heartbeatSentAt = new WeakMap<RaftCore, Map<number, number>>();

  constructor(private readonly options: SimOptions) {
    this.random = new SeededRandom(options.seed * 2654435761 + 1);
    this.steps = options.steps ?? 300;
    this.livenessTicks = options.livenessTicks ?? 250;
    const r = this.random;
    this.net = new SimNetwork(r, {
      dropRate: r.pick([0, 0.02, 0.05, 0.1, 0.2]),
      duplicateRate: r.pick([0, 0.02, 0.05]),
      maxDelayTicks: r.pick([0, 1, 2, 3]),
    });
    this.crashRate = r.pick([0, 0.005, 0.01, 0.02, 0.04]);
    this.partitionRate = r.pick([0, 0.005, 0.01, 0.02]);
    const count = options.nodes ?? 3;
    const maxMsgEntries = r.pick([2, 16]);
    const voters = Array.from({ length: count }, (_, i) => i + 1);
    const hooks = {
      send: (node: SimNode, messages: readonly Message[]) => {
        for (const m of messages) {
          if (m.type === MessageType.Heartbeat && node.core) this.noteHeartbeat(node.core, m.context);
          this.net.send(m, this.now);
        }
      },
      applied: (node: SimNode, entry: Entry, sm: SimStateMachine) => this.onApplied(node, entry, sm),
      restored: (node: SimNode, sm: SimStateMachine) => this.checkHash(node, sm),
    };
    for (let id = 1; id <= count + 1; id++) {
      // The spare node (count + 1) starts outside the group and waits to be added.
      const node = new SimNode(id, id <= count ? voters : [], options.seed, options.bugs, hooks, maxMsgEntries);
      node.start();
      this.nodes.push(node);
    }
  }

  run(): SimResult {
    for (let i = 0; i < this.steps && this.violations.length === 0; i++) this.step();
    if (this.violations.length === 0) this.checkLiveness();
    if (this.violations.length === 0) this.checkAcknowledgedKept();
    return {
      seed: this.options.seed,
      violations: this.violations,
      acknowledged: this.acked.size,
      ticks: this.now,
      replay: replayCommand(this.options),
    };
  }

  private violation(text: string): void {
    if (this.violations.length < 5) this.violations.push(`tick ${this.now}: ${text}`);
  }

  private step(): void {
    this.now++;
    if (this.faultsOn) this.injectFaults();
    this.maybePropose();
    for (const node of this.nodes) node.core?.tick();
    this.deliverAll();
    this.checkSafety();
  }

  private syncDelay = (): number => (this.random.chance(0.6) ? 0 : 1 + this.random.int(2));

  private deliverAll(): void {
    for (let round = 0; round < 8; round++) {
      let busy = false;
      for (const node of this.nodes) if (node.process(this.now, this.syncDelay)) busy = true;
      const due = this.net.takeDue(this.now);
      for (const m of due) {
        const target = this.nodes[m.to - 1];
        if (target?.core) {
          target.core.step(m);
          busy = true;
        }
      }
      if (!busy) break;
    }
  }

  private aliveNodes(): SimNode[] {
    return this.nodes.filter((n) => n.alive);
  }

  private currentLeader(): SimNode | undefined {
    let best: SimNode | undefined;
    for (const n of this.nodes) {
      if (n.core?.role === Role.Leader && (!best || n.core.term > best.core!.term)) best = n;
    }
    return best;
  }

  private injectFaults(): void {
    const r = this.random;
    if (r.chance(this.crashRate)) {
      const alive = this.aliveNodes();
      if (alive.length > 0) r.pick(alive).crash();
    }
    if (r.chance(0.05)) {
      const down = this.nodes.filter((n) => !n.alive);
      if (down.length > 0) r.pick(down).start();
    }
    if (r.chance(this.partitionRate) && !this.net.isPartitioned()) {
      const sides = new Map<NodeId, number>();
      for (const n of this.nodes) sides.set(n.id, r.int(2));
      this.net.partition(sides);
    } else if (r.chance(0.03)) {
      this.net.heal();
    }
    if (r.chance(0.02)) {
      const alive = this.aliveNodes();
      if (alive.length > 0) r.pick(alive).snapshotNow();
    }
    if (r.chance(0.01)) this.changeMembership();
    if (r.chance(0.005)) {
      const leader = this.currentLeader();
      if (leader?.core) {
        const others = leader.core.config().voters.filter((v) => v !== leader.id);
        if (others.length > 0) leader.core.transferLeadership(r.pick(others));
      }
    }
  }

  private changeMembership(): void {
    const leader = this.currentLeader();
    const core = leader?.core;
    if (!core) return;
    const config = core.config();
    const members = new Set([...config.voters, ...config.learners]);
    const outsiders = this.nodes.filter((n) => !members.has(n.id));
    if (outsiders.length > 0) {
      core.proposeConfChange({ type: 'addLearner', nodeId: this.random.pick(outsiders).id });
    } else if (config.voters.length > 2) {
      core.proposeConfChange({ type: 'remove', nodeId: this.random.pick(config.voters) });
    }
  }

  private maybePropose(): void {
    if (!this.random.chance(0.3)) return;
    const leader = this.currentLeader();
    const target = leader && this.random.chance(0.9) ? leader : this.random.pick(this.nodes);
    if (!target.core) return;
    const count = 1 + this.random.int(3);
    const values: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      const value = `p${++this.proposalCounter}`;
      this.proposedValues.add(value);
      values.push(encoder.encode(value));
    }
    target.core.proposeBatch(values);
  }

  private onApplied(node: SimNode, entry: Entry, sm: SimStateMachine): void {
    if (sm.hash === -1) {
      this.violation(`node ${node.id} applied ${entry.index} out of order`);
      return;
    }
    this.checkHash(node, sm);
    if (entry.type === EntryType.Normal && entry.data.length > 0) {
      const value = decoder.decode(entry.data);
      // The client hears "committed" when the leader applies its proposal.
      if (node.core?.role === Role.Leader && !this.acked.has(value)) this.acked.set(value, entry.index);
    }
  }

  private checkHash(node: SimNode, sm: SimStateMachine): void {
    const known = this.hashAt.get(sm.lastIndex);
    if (known === undefined) this.hashAt.set(sm.lastIndex, sm.hash);
    else if (known !== sm.hash) this.violation(`state machine safety: node ${node.id} diverged at index ${sm.lastIndex}`);
  }

  private noteHeartbeat(core: RaftCore, round: number): void {
    let sent = this.heartbeatSentAt.get(core);
    if (!sent) this.heartbeatSentAt.set(core, (sent = new Map()));
    if (!sent.has(round)) sent.set(round, this.now);
  }

  /** The node holds a leader lease now (as RaftNode.holdsLease, in ticks). */
  private holdsLease(core: RaftCore): boolean {
    const basis = core.leaseBasis();
    if (basis === 'always') return true;
    if (basis === 'none' || basis === 0) return false;
    const sentAt = this.heartbeatSentAt.get(core)?.get(basis);
    return sentAt !== undefined && this.now - sentAt < core.leaseTicks();
  }

  private checkSafety(): void {
    // Lease safety: at most one node answers as leader at any moment.
    const holders = this.nodes.filter((n) => n.core && this.holdsLease(n.core)).map((n) => `${n.id} (term ${n.core!.term})`);
    if (holders.length > 1) this.violation(`two leader leases at once: ${holders.join(', ')}`);
    for (const node of this.nodes) {
      const core = node.core;
      if (!core) continue;
      // Election safety: at most one leader per term.
      if (core.role === Role.Leader) {
        const known = this.leaders.get(core.term);
        if (known === undefined) this.leaders.set(core.term, node.id);
        else if (known !== node.id) this.violation(`two leaders in term ${core.term}: ${known} and ${node.id}`);
      }
      const log = core.log;
      // Log matching: an (index, term) pair identifies the entry and everything before it. Checked
      // incrementally: from the last checked entry unless the log changed beneath it.
      const mark = this.checkedTo.get(node.id);
      let from = log.firstIndex();
      if (mark && mark.core === core && mark.index >= from && log.term(mark.index) === mark.term) from = mark.index + 1;
      for (let i = from; i <= log.lastIndex(); i++) {
        const e = log.entry(i)!;
        const identity = `${e.type}:${decoder.decode(e.data)}:${log.term(i - 1)}`;
        const key = `${i}:${e.term}`;
        const known = this.entryIdentity.get(key);
        if (known === undefined) this.entryIdentity.set(key, identity);
        else if (known !== identity) this.violation(`log matching: node ${node.id} entry ${key} differs`);
      }
      this.checkedTo.set(node.id, { core, index: log.lastIndex(), term: log.lastTerm() });
      // Committed entries never change.
      const seenFrom = Math.max(this.commitSeen.get(node.id) ?? 0, log.snapshotIndex);
      for (let i = seenFrom + 1; i <= log.committed; i++) {
        const term = log.term(i);
        if (term === undefined) continue;
        const known = this.committedTerm[i];
        if (known === undefined) {
          this.committedTerm[i] = term;
          this.committedSeenAt[i] = core.term;
        } else if (known !== term) {
          this.violation(`committed entry ${i} changed term ${known} -> ${term} on node ${node.id}`);
        }
      }
      this.commitSeen.set(node.id, Math.max(seenFrom, log.committed));
    }
    // Leader completeness: a leader holds every entry committed in an earlier term.
    for (const node of this.nodes) {
      const core = node.core;
      if (core?.role !== Role.Leader) continue;
      const log = core.log;
      for (let i = log.firstIndex(); i < this.committedTerm.length; i++) {
        const term = this.committedTerm[i];
        if (term === undefined || this.committedSeenAt[i]! >= core.term) continue;
        if (log.term(i) !== term) {
          this.violation(`leader completeness: leader ${node.id} (term ${core.term}) lacks committed entry ${i}`);
          break;
        }
      }
    }
  }

  /** Heal everything, then require a leader and a committed proposal applied on every member within a bound. */
  private checkLiveness(): void {
    this.faultsOn = false;
    this.net.heal();
    this.net.faults = { dropRate: 0, duplicateRate: 0, maxDelayTicks: this.net.faults.maxDelayTicks };
    for (const n of this.nodes) if (!n.alive) n.start();
    const marker = 'liveness';
    let proposedAt = -1;
    const deadline = this.now + this.livenessTicks;
    while (this.now < deadline && this.violations.length === 0) {
      this.now++;
      for (const node of this.nodes) node.core?.tick();
      const leader = this.currentLeader();
      if (leader?.core && (proposedAt < 0 || this.now - proposedAt > 40)) {
        const result = leader.core.propose(encoder.encode(marker));
        if (result.ok) proposedAt = this.now;
      }
      this.deliverAll();
      this.checkSafety();
      if (leader?.core && this.acked.has(marker)) {
        const index = this.acked.get(marker)!;
        const config = leader.core.config();
        const members = [...config.voters, ...config.learners];
        if (members.every((id) => (this.nodes[id - 1]?.sm.lastIndex ?? 0) >= index)) return;
      }
    }
    if (this.violations.length === 0) {
      const leader = this.currentLeader();
      this.violation(
        `liveness: no committed proposal on every member within ${this.livenessTicks} ticks after healing (leader ${leader?.id ?? 'none'})`,
      );
    }
  }

  /** Every acknowledged proposal is in the final history at the index it was acknowledged at. */
  private checkAcknowledgedKept(): void {
    const leader = this.currentLeader();
    const core = leader?.core;
    if (!core) return;
    for (const [value, index] of this.acked) {
      if (index <= core.log.snapshotIndex) continue;
      const entry = core.log.entry(index);
      if (!entry || decoder.decode(entry.data) !== value) {
        this.violation(`acknowledged proposal ${value} at ${index} lost`);
        return;
      }
    }
    if (!isVoter(core.config(), core.id)) this.violation('final leader is not a voter');
  }
}
