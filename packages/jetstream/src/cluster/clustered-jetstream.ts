// JetStream in a cluster on this node: the meta group member, the replicas that follow its catalogue, and
// the rule of which node answers which `$JS.API` request (meta leader: catalogue; stream leader: the
// stream's own calls; nobody in charge: 10008 promptly). Also the view monitoring and shutdown read.
import { NONE, type NodeId } from '@flotilla/raft';
import type { ApiError } from '../api/api-error.js';
import type { ClusterBlocks } from '../api/open-stream-info.js';
import type { StreamApi } from '../api/stream-api.js';
import type { BusMessage } from '../message-bus.js';
import type {
  ClusterEnvironment,
  ClusterPeer,
  ClusteredJetStreamView,
  RaftGroupStatus,
  StreamAssignment,
  StreamReplicaView,
} from './cluster-contracts.js';
import { ApiIngress, relayInboxOf } from './api-ingress.js';
import { ClusterApi } from './clustered-jetstream-api.js';
import type { ClusteredCatalogue } from './clustered-catalogue.js';
import { removeOrphanReplicas } from './clustered-jetstream-cleanup.js';
import type { ReplicaConsumerHooks } from './clustered-jetstream-consumers.js';
import { ReplicaSet } from './clustered-jetstream-replicas.js';
import { endpointOf, type ApiEndpoint } from '../api/api-endpoints.js';
import { routeOfEndpoint } from './clustered-jetstream-routing.js';
import { SettlingRequests } from './clustered-jetstream-settling.js';
import { LEADERLESS_ANSWER_MS, LeaderlessClock, designatedAnswerer } from './clustered-jetstream-leaderless.js';
import { DEFAULT_BOOTSTRAP_TIMING, decideMetaStart, metaGroupOf, type BootstrapTiming } from './meta-bootstrap.js';
import { ClusterErrors } from './meta-errors.js';
import { MetaGroup, type MetaGroupOptions } from './meta-group.js';
import type { ReplicaStreams } from './replica-streams.js';
import { NodeStreamReplicaHost, ReplicaEnvironment, type ReplicaNode } from './stream-replica-host.js';
import { StreamReplica } from './stream-replica.js';

/** What clustered JetStream needs from this node's JetStream (implemented by JetStreamService). */
export interface ClusteredJetStreamHost extends ReplicaNode {
  readonly options: { readonly storeDir: string };
  /** The stream API the catalogue endpoints answer through. */
  readonly streamApi: StreamApi;
  respondError(reply: string | null, type: string, error: ApiError): void;
  /** Serves a request from this node's own streams (see jetstream-service.ts). */
  dispatchLocal(t: readonly string[], msg: BusMessage, endpoint?: ApiEndpoint): boolean;
}

export interface ClusteredJetStreamOptions {
  env: ClusterEnvironment;
  /** Where opened replicas' streams and consumers are registered. */
  replicaStreams: ReplicaStreams;
  /** The replicas' consumer hooks, handed to every replica opened. */
  replicaConsumers: ReplicaConsumerHooks;
  bootstrap?: BootstrapTiming;
  meta?: MetaGroupOptions;
  /** Nodes that know of no meta leader answer catalogue calls with 10008 after this delay, so a real leader wins. */
  unavailableDelayMs?: number;
  /** A group must have been leaderless this long before one member answers in its stead (LEADERLESS_ANSWER_MS). */
  leaderlessAnswerMs?: number;
}

/** How often the meta leader records new nodes and adds non-members to the group. */
const UPKEEP_INTERVAL_MS = 1_000;
/** Orphaned replica data is looked for once this node has followed a meta leader for two checks this far apart… */
const ORPHAN_CHECK_MS = 15_000;
/** …trying at most this many times. */
const ORPHAN_CHECKS = 20;
const HANDOFF_POLL_MS = 50;
/** The meta leader holds a catalogue request this long at most while its catalogue settles (its term's first commit, or an apply one turn behind a commit)… */
const SETTLE_WAIT_MS = 2_000;
/** …checking this often… */
const SETTLE_POLL_MS = 5;
/** …and at most this many at once. */
const MAX_SETTLING_REQUESTS = 1024;
/** Leaderlessness of the groups is sampled this often (requests sample it too). */
const LEADERLESS_SAMPLE_MS = 100;
/** A request whose answer waits (a leaderless group, a Raft leader not serving yet) is decided again this often… */
const DEFER_POLL_MS = 20;
/**
 * A leader elected by a transfer leaves original requests to its predecessor this long (the predecessor answered
 * or deferred what it saw before it handed over); the predecessor asks again what it sees for HANDED_OVER_COVER_MS
 * after it learnt of its successor — longer, since it learns of the new term a round trip later.
 */
const TAKE_OVER_GRACE_MS = 250;
const HANDED_OVER_COVER_MS = 600;
/** A request deferred while its group has no leader in sight looks for one this often. */
const LEADERLESS_POLL_MS = 50;
/**
 * A node restarted from its meta log answers for no leaderless group this long after it started (its links and
 * leaders are not known yet: its own empty view would join the real leader's answer), as nats-server's 10 s.
 */
const RESTART_SILENCE_MS = 10_000;
/** …for at most this long past the leaderless threshold, then decided as it stands… */
const DEFER_MAX_MS = 3_000;
/** …with at most this many waiting at once (beyond it, decided at once). */
const MAX_DEFERRED = 4096;
/** Marks a request a leader that handed over published again (see afterHandOver). */
const REASK_HEADER = Buffer.from('NATS/1.0\r\nFlotilla-Reask: 1\r\n\r\n');
/** Reply subjects of stream requests this node answered, kept this long (at most MAX_ANSWERED) to drop a re-ask it already answered. */
const ANSWERED_KEEP_MS = 5_000;
const MAX_ANSWERED = 8192;

type Again = false | 'leaderless' | 'serve';

const REASK_LINE = Buffer.from('Flotilla-Reask: 1\r\n');

function isReask(msg: BusMessage): boolean {
  return msg.header !== null && msg.header.includes(REASK_LINE);
}

/** The request's header block with the re-ask mark added (its own headers kept: they may decide the answer). */
function reaskHeader(header: Buffer | null): Buffer {
  if (header === null || header.length < 4) return REASK_HEADER;
  // A header block ends with an empty line: the mark goes before it.
  return Buffer.concat([header.subarray(0, header.length - 2), REASK_LINE, header.subarray(header.length - 2)]);
}

/** Requests answered once through a relay: every endpoint but pulls and direct gets (many replies, or replies from any replica). */
function relayable(t: readonly string[]): boolean {
  const r = routeOfEndpoint(endpointOf(t), t);
  return r.kind === 'catalogue' || (r.kind === 'stream' && r.op !== 'pull');
}

export class ClusteredJetStream implements ClusteredJetStreamView, ClusterBlocks {
  readonly meta: MetaGroup;
  readonly replicaSet: ReplicaSet<StreamReplica>;
  readonly api: ClusterApi;
  /** The clustered catalogue over this meta group (it registers itself), for SERVER.REMOVE's re-placement. */
  catalogue: ClusteredCatalogue | null = null;
  /** Relays one answer to each request that entered the cluster here (api-ingress.ts). */
  readonly ingress: ApiIngress;
  private readonly env: ClusterEnvironment;
  private readonly lastSeenMs = new Map<NodeId, number>();
  private readonly startedMs = Date.now();
  private unsubscribePeers: () => void = () => undefined;
  private unsubscribeLeader: () => void = () => undefined;
  private upkeepTimer: NodeJS.Timeout | null = null;
  private orphanTimer: NodeJS.Timeout | null = null;
  private upkeepRunning = false;
  private starting: Promise<void> | null = null;
  private stopped = false;
  /** Requests the meta leader answers once its catalogue is settled (see clustered-jetstream-settling.ts). */
  private readonly settling: SettlingRequests;
  private readonly leaderless = new LeaderlessClock();
  private leaderlessTimer: NodeJS.Timeout | null = null;
  private deferred = 0;
  /** Started from a meta log on disk (not a first start). */
  private restarted = false;
  private readonly answeredReplies = new Map<string, { atMs: number; again: boolean }>();

  constructor(
    readonly js: ClusteredJetStreamHost,
    private readonly options: ClusteredJetStreamOptions,
  ) {
    this.env = options.env;
    this.meta = new MetaGroup(this.env, js.log, options.meta);
    this.api = new ClusterApi(this);
    this.ingress = new ApiIngress(js.bus, this.env.self.serverId);
    const replicaHost = new NodeStreamReplicaHost(js, new ReplicaEnvironment(this.env, this), options.replicaConsumers);
    const streams = options.replicaStreams;
    this.replicaSet = new ReplicaSet<StreamReplica>({
      selfId: this.env.self.raftNodeId,
      storeDir: js.options.storeDir,
      log: js.log,
      assignments: () => this.meta.state.assignments(),
      open: (a, dir) => StreamReplica.open(replicaHost, a, dir),
      added: (r) => streams.added(r),
      removing: (r, destroyed) => streams.removing(r, destroyed),
      configChanged: (r) => streams.configChanged(r),
    });
    this.meta.state.onChange = () => this.replicaSet.changed();
    this.settling = new SettlingRequests({
      settled: () => this.meta.answers(),
      settling: () => this.leadsMetaRaft(),
      maxWaitMs: SETTLE_WAIT_MS,
      pollMs: SETTLE_POLL_MS,
      maxHeld: MAX_SETTLING_REQUESTS,
    });
  }

  /** The JetStream account this member serves; undefined without accounts. */
  get account(): string | undefined {
    return this.env.account;
  }

  get clusterName(): string {
    return this.env.clusterName;
  }

  /** Joins (or founds) the meta group in the background: API calls get 10008 until it has a leader. */
  start(): void {
    // In the same turn as the service's API subscriptions: a request entering here finds its relay inbox.
    this.ingress.start();
    this.unsubscribePeers = this.env.onPeersChanged(() => this.peersChanged());
    this.peersChanged();
    this.leaderlessTimer = setInterval(() => this.sampleLeaders(), LEADERLESS_SAMPLE_MS);
    this.leaderlessTimer.unref();
    this.sampleLeaders();
    this.unsubscribeLeader = this.meta.onLeaderChange((leader, term) => {
      this.js.clusterObserver?.leaderChanged?.(metaGroupOf(this.env), leader, term);
      void this.upkeep();
    });
    this.starting = (async () => {
      const how = await decideMetaStart(this.env, this.js.log, this.options.bootstrap ?? DEFAULT_BOOTSTRAP_TIMING, () => this.stopped);
      if (this.stopped) return;
      this.restarted = how.kind === 'restart';
      this.js.log.info({ how: how.kind, self: this.env.self.name, expected: this.env.expectedClusterSize }, 'starting the meta group');
      await this.meta.start(how);
      if (this.stopped) return;
      this.upkeepTimer = setInterval(() => void this.upkeep(), UPKEEP_INTERVAL_MS);
      this.upkeepTimer.unref();
      this.scheduleOrphanCleanup();
    })().catch((err: unknown) => this.js.log.error({ err: String(err) }, 'meta group could not start'));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.settling.stop();
    this.ingress.stop();
    this.unsubscribePeers();
    this.unsubscribeLeader();
    if (this.upkeepTimer !== null) clearInterval(this.upkeepTimer);
    if (this.orphanTimer !== null) clearInterval(this.orphanTimer);
    if (this.leaderlessTimer !== null) clearInterval(this.leaderlessTimer);
    await this.starting;
    await this.replicaSet.stop();
    await this.meta.stop();
  }

  /** Once the catalogue here is current (two checks in a row), removes replica data it no longer assigns here. */
  private scheduleOrphanCleanup(): void {
    let checks = 0;
    let currentBefore = false;
    this.orphanTimer = setInterval(() => {
      const current = this.metaLeaderKnown() && this.meta.caughtUp();
      if ((current && currentBefore) || ++checks >= ORPHAN_CHECKS) {
        if (this.orphanTimer !== null) clearInterval(this.orphanTimer);
        this.orphanTimer = null;
        if (!current || this.stopped) return;
        void removeOrphanReplicas({
          storeDir: this.js.options.storeDir,
          raftStore: this.env.raftStore,
          log: this.js.log,
          keptGroups: () => {
            const kept = new Set(this.replicaSet.all().map((r) => r.assignment.group));
            for (const a of this.meta.state.assignments()) if (a.peers.includes(this.env.self.raftNodeId)) kept.add(a.group);
            return kept;
          },
        });
      }
      currentBefore = current;
    }, ORPHAN_CHECK_MS);
    this.orphanTimer.unref();
  }

  // ---- peers ---------------------------------------------------------------------------------

  private peersChanged(): void {
    const now = Date.now();
    for (const p of this.env.peers()) if (p.active) this.lastSeenMs.set(p.raftNodeId, now);
    void this.upkeep();
  }

  /** Every node known: linked or seen since start (the environment's view), plus the catalogue's node list. */
  knownPeers(): ClusterPeer[] {
    const peers = this.env.peers();
    const seen = new Set(peers.map((p) => p.raftNodeId));
    for (const n of this.meta.state.nodes()) {
      if (!seen.has(n.raftNodeId)) peers.push({ name: n.name, raftNodeId: n.raftNodeId, serverId: n.serverId, active: false });
    }
    return peers;
  }

  isActive(id: NodeId): boolean {
    if (id === this.env.self.raftNodeId) return true;
    return this.env.peers().some((p) => p.raftNodeId === id && p.active);
  }

  /** Milliseconds since this node last had a link to `id` (0 while linked). */
  private activeAgoMs(id: NodeId): number {
    if (this.isActive(id)) return 0;
    return Date.now() - (this.lastSeenMs.get(id) ?? this.startedMs);
  }

  nodeIdOf(name: string): NodeId | undefined {
    if (name === this.env.self.name) return this.env.self.raftNodeId;
    return this.meta.state.nodes().find((n) => n.name === name)?.raftNodeId ?? this.env.peers().find((p) => p.name === name)?.raftNodeId;
  }

  nameOf(id: NodeId): string {
    return this.meta.nameOf(id);
  }

  /** Nodes a new replica may go to: active meta voters (a learner may not run JetStream at all), none removed by SERVER.REMOVE. */
  placementCandidates(): NodeId[] {
    const members = new Set(this.meta.voters());
    const active = [this.env.self.raftNodeId, ...this.env.peers().filter((p) => p.active).map((p) => p.raftNodeId)];
    return [...new Set(active)].filter((id) => (members.size === 0 || members.has(id)) && !this.meta.state.isRemoved(id));
  }

  /** A node's server_tags as its link announced them (self: its own). */
  tagsOf(id: NodeId): readonly string[] {
    if (id === this.env.self.raftNodeId) return this.env.self.tags ?? [];
    return this.env.peers().find((p) => p.raftNodeId === id)?.tags ?? [];
  }

  /** `jetstream { unique_tag }` of this cluster. */
  get uniqueTag(): string | undefined {
    return this.env.uniqueTag;
  }

  /** The stream's leader as far as this node knows (its first peer when it has no local replica). */
  streamLeaderOf(a: StreamAssignment): NodeId {
    const local = this.replicaSet.byGroupId(a.group);
    const leader = local?.leaderId() ?? NONE;
    return leader !== NONE ? leader : (a.peers[0] ?? NONE);
  }

  /** Meta leader: record new nodes in the catalogue and add nodes that are not yet members. */
  private async upkeep(): Promise<void> {
    if (this.upkeepRunning || this.stopped || !this.meta.isLeader()) return;
    this.upkeepRunning = true;
    try {
      const seen = [this.env.self, ...this.env.peers().filter((p) => p.active)];
      for (const p of seen) {
        const known = this.meta.state.node(p.raftNodeId);
        if (known === undefined || known.name !== p.name || known.serverId !== p.serverId) {
          await this.meta.propose({ op: 'node', node: { name: p.name, raftNodeId: p.raftNodeId, serverId: p.serverId } });
        }
      }
      for (const p of seen) {
        // A node peered out by SERVER.REMOVE is not taken back in.
        if (this.meta.state.isRemoved(p.raftNodeId)) continue;
        if (!this.meta.members().includes(p.raftNodeId) && (await this.meta.addMember(p.raftNodeId))) {
          this.js.log.info({ node: p.name }, 'added a node to the meta group');
        }
      }
    } catch (err) {
      this.js.log.debug({ err: String(err) }, 'meta upkeep interrupted (retried)');
    } finally {
      this.upkeepRunning = false;
    }
  }

  // ---- who answers ---------------------------------------------------------------------------

  /** A meta leader exists as far as this node can tell: itself, or a node it has a live link to. */
  metaLeaderKnown(): boolean {
    if (this.meta.isLeader()) return true;
    const leader = this.meta.leaderId();
    if (leader === NONE) return false;
    return leader === this.env.self.raftNodeId || this.isActive(leader);
  }

  /**
   * Routes one `$JS.API` request (tokens after `$JS.API`). Returns true when this node answers it (for the
   * API statistics); every other node stays silent. Exactly one node answers: the (meta or stream) leader, or
   * — for a group leaderless longer than an election — its one designated member; a member that does not
   * know the leader yet stays silent meanwhile.
   */
  route(t: readonly string[], msg: BusMessage): boolean {
    return this.routeAt(t, this.throughRelay(t, msg), performance.now());
  }

  /**
   * The copy this node decides, its answer going through the relay of the node the request entered by
   * (api-ingress.ts): that node sends the client one answer, whichever nodes answer. A re-ask carries a relay
   * inbox already; a request from a node that does not relay is answered straight to the client.
   */
  private throughRelay(t: readonly string[], msg: BusMessage): BusMessage {
    if (msg.reply === null || isReask(msg) || !relayable(t)) return msg;
    if (msg.fromPeer === undefined) return this.ingress.entered({ ...msg, reply: msg.reply });
    if (!this.ingress.relaysFor(msg.fromPeer)) return msg;
    return { ...msg, reply: relayInboxOf(msg.fromPeer, msg.reply) };
  }

  /**
   * `again`: a request this node deferred, decided now — 'leaderless' (its group had no leader in sight: if
   * this node leads by now, another leader may have answered meanwhile, so only the leaderless answer is
   * left), or 'serve' (this node led and waited to serve).
   */
  private routeAt(t: readonly string[], msg: BusMessage, firstMs: number, again: Again = false): boolean {
    const endpoint = endpointOf(t);
    const r = routeOfEndpoint(endpoint, t);
    switch (r.kind) {
      case 'none':
        return false;
      case 'catalogue':
        if (this.meta.answers()) {
          // What Flotilla does not implement is refused by name, as on one node.
          // The table's handler, through the clustered Catalogue (what Flotilla does not implement is refused by name).
          if (endpoint?.operation === 'META.LEADER.STEPDOWN') this.api.metaStepDownRequest(r.type, msg);
          else if (endpoint?.operation === 'SERVER.REMOVE') this.api.serverRemoveRequest(r.type, msg);
          else if (endpoint?.operation === 'ACCOUNT.PURGE') this.api.accountPurgeRequest(t, r.type, msg);
          else if (endpoint?.operation === 'ACCOUNT.STREAM.MOVE' || endpoint?.operation === 'ACCOUNT.STREAM.CANCEL_MOVE') this.api.streamMoveRequest(t, r.type, msg);
          else this.js.dispatchLocal(t, msg, endpoint);
          return true;
        }
        if (this.leadsMetaRaft()) return this.holdUntilSettled(t, r.type, msg);
        return this.unavailableUnlessLeader(r.type, msg);
      case 'stream': {
        const a = this.meta.state.assignment(r.stream);
        if (a === undefined) {
          // Unknown stream: the meta leader says so (the local handlers answer 10059 or nothing, as alone).
          if (this.meta.answers()) return this.js.dispatchLocal(t, msg);
          if (r.op === 'pull') return false;
          // Its create may be committed and not applied yet: decide once the catalogue is settled.
          if (this.leadsMetaRaft()) return this.holdUntilSettled(t, r.type, msg);
          return this.unavailableUnlessLeader(r.type, msg);
        }
        const replica = this.replicaSet.byGroupId(a.group);
        if (replica === undefined) return false;
        const waitedMs = performance.now() - firstMs;
        const thresholdMs = this.options.leaderlessAnswerMs ?? LEADERLESS_ANSWER_MS;
        const final = waitedMs > thresholdMs + DEFER_MAX_MS;
        if (this.options.replicaStreams.serves(replica)) {
          if (r.op === 'stepdown') {
            this.api.streamStepDown(replica, r.type, msg);
            return true;
          }
          // Handing leadership over: the target may lead already and answer this too; decide once the transfer
          // is done (then asked again, so the new leader answers it) or given up (then here).
          if (replica.handingOverLeadership === true && r.op !== 'pull' && !final) return this.afterHandOver(replica, t, msg, firstMs);
          // Leads without its lease (a quorum has not acknowledged it lately: its loop or its links were slow, and
          // the others may have elected a successor it has not heard of): decide again shortly — by then it holds
          // the lease again, or it learnt of the new term and stays silent. Pulls are not answered as API replies
          // (and share one inbox per consumer, so they cannot be told apart): they go on as before.
          if (r.op !== 'pull' && !final && !replica.holdsLease()) return this.decideLater(t, msg, firstMs, DEFER_POLL_MS, 'serve');
          // Just elected by a hand-over: the predecessor answers (or asks again) the originals arriving now.
          if (r.op !== 'pull' && again === false && !isReask(msg) && replica.takingOver(TAKE_OVER_GRACE_MS)) return false;
          if (!this.firstAnswer(msg, again !== false)) return false;
          return this.js.dispatchLocal(t, msg);
        }
        const leader = replica.leaderId();
        const led = leader !== NONE && this.isActive(leader);
        if (led) {
          // Deferred while no leader was in sight and one is now: ask again, so it answers (it drops what it
          // answered already, by reply subject).
          if (again === 'leaderless') this.reask(msg);
          // Handed over a moment ago: the successor leaves originals to this node for its grace; ask again.
          else if (again === false && r.op !== 'pull' && !isReask(msg) && replica.handedOverWithin(HANDED_OVER_COVER_MS)) this.reask(msg);
          return false;
        }
        // Raft leader here but not serving yet (applying its predecessors' entries, or its term's first entry not
        // committed): silent, as nats-server's leader until its leader change is processed — except for what a
        // predecessor that handed over asks again, and for what this node itself deferred while it saw no leader,
        // both answered once it serves. The latter is a leader deposed by its own quorum check (its follower's
        // replies late under load) and re-elected: the follower never lost sight of it and stayed silent.
        if (replica.status().role === 'leader') return (again === 'leaderless' || isReask(msg)) && !final && this.decideLater(t, msg, firstMs, DEFER_POLL_MS, 'serve');
        // A pull never gets an error reply; a re-ask is for leaders (this node has the original deferred).
        if (r.op === 'pull' || isReask(msg)) return false;
        // Leaderless as far as this member knows. A group whose leader this member merely has not heard of yet
        // (just created, just elected, this node just restarted) is not leaderless: wait for the threshold,
        // watching for a leader to ask again.
        const leaderlessMs = this.leaderless.leaderlessForMs(a.group, false);
        if (leaderlessMs < thresholdMs || this.inRestartSilence()) return final ? false : this.decideLater(t, msg, firstMs, LEADERLESS_POLL_MS, 'leaderless');
        const self = this.env.self.raftNodeId;
        if (!designatedAnswerer(replica.assignment.peers, self, (id) => this.isActive(id))) return false;
        // The designated member answers STREAM.INFO with its own view (no `leader` in `cluster`), and other calls
        // (pulls aside) with 10008 once the meta layer is leaderless too (cluster-semantics §2).
        if (r.op === 'info') return this.js.dispatchLocal(t, msg);
        return this.unavailableUnlessLeader(r.type, msg, false);
      }
    }
  }

  /** Decides the request again after `delayMs` (bounded in number; beyond it this node stays silent). */
  private decideLater(t: readonly string[], msg: BusMessage, firstMs: number, delayMs: number, again: Again): boolean {
    if (this.deferred >= MAX_DEFERRED) return false;
    this.deferred++;
    const timer = setTimeout(() => {
      this.deferred--;
      if (!this.stopped) this.routeAt(t, msg, firstMs, again);
    }, delayMs);
    timer.unref();
    return true;
  }

  /**
   * A request that reached a leader handing over: once the transfer is done, it is published again as it came
   * (every node routes it afresh: the new leader answers); if the transfer was given up, answered here.
   */
  private afterHandOver(replica: StreamReplica, t: readonly string[], msg: BusMessage, firstMs: number): boolean {
    if (this.deferred >= MAX_DEFERRED) return this.js.dispatchLocal(t, msg);
    this.deferred++;
    const thresholdMs = this.options.leaderlessAnswerMs ?? LEADERLESS_ANSWER_MS;
    const check = (): void => {
      if (this.stopped) return void this.deferred--;
      if (replica.handingOverLeadership === true && this.options.replicaStreams.serves(replica)) return void setTimeout(check, DEFER_POLL_MS).unref();
      if (this.options.replicaStreams.serves(replica)) {
        this.deferred--;
        return void this.routeAt(t, msg, firstMs, 'serve');
      }
      // Handed over: ask again only once the new leader is in sight, so the re-ask reaches a Raft leader (which
      // answers once it serves). Asked earlier, the target may still be a candidate: it drops a re-ask, and it
      // dropped the original too (the old leader still led then), so nobody would answer.
      const leader = replica.leaderId();
      const inSight = leader !== NONE && this.isActive(leader);
      if (!inSight && performance.now() - firstMs < thresholdMs + DEFER_MAX_MS) return void setTimeout(check, DEFER_POLL_MS).unref();
      this.deferred--;
      if (inSight) this.reask(msg);
      else this.routeAt(t, msg, firstMs, 'leaderless');
    };
    setTimeout(check, DEFER_POLL_MS).unref();
    return true;
  }

  private inRestartSilence(): boolean {
    return this.restarted && Date.now() - this.startedMs < RESTART_SILENCE_MS;
  }

  /** Publishes a request again as it came, marked (every node routes it afresh; see firstAnswer). */
  private reask(msg: BusMessage): void {
    this.js.bus.publish(msg.subject, msg.reply, reaskHeader(msg.header), msg.data);
  }

  /**
   * False for a second copy of a request this node already answered: one it deferred, or one a predecessor
   * asked again after handing over (the same request can reach it both ways).
   */
  private firstAnswer(msg: BusMessage, again: boolean): boolean {
    if (msg.reply === null) return true;
    const now = performance.now();
    const second = again || isReask(msg);
    const before = this.answeredReplies.get(msg.reply);
    // A second copy of one answered; or the original of one answered when asked again (it came late).
    if (before !== undefined && (second || before.again)) return false;
    if (this.answeredReplies.size >= MAX_ANSWERED) {
      for (const [reply, at] of this.answeredReplies) {
        if (now - at.atMs < ANSWERED_KEEP_MS && this.answeredReplies.size < MAX_ANSWERED) break;
        this.answeredReplies.delete(reply);
      }
    }
    this.answeredReplies.set(msg.reply, { atMs: now, again: second });
    return true;
  }

  /** Samples which groups have a leader in sight (so a long leaderless stretch is known when a request comes). */
  private sampleLeaders(): void {
    this.leaderless.observe(metaGroupOf(this.env), this.metaLeaderKnown());
    const live = new Set<string>([metaGroupOf(this.env)]);
    for (const r of this.replicaSet.all()) {
      const group = r.assignment.group;
      live.add(group);
      const leader = r.leaderId();
      this.leaderless.observe(group, (leader !== NONE && this.isActive(leader)) || r.isLeader());
    }
    this.leaderless.retain(live);
  }

  /**
   * This node is the meta group's Raft leader, settled or not. Not settled = a commit not applied yet (one
   * driver turn) or its term's first entry not committed: the others see a live leader and stay
   * silent, so this node must answer.
   */
  private leadsMetaRaft(): boolean {
    return this.meta.leaderId() === this.env.self.raftNodeId;
  }

  /** Answers once the catalogue is settled (routed again then); given up as without a leader otherwise. */
  private holdUntilSettled(t: readonly string[], type: string, msg: BusMessage): boolean {
    this.settling.hold(
      () => {
        // Decided again as it stands (its reply already goes through the relay).
        if (!this.stopped) this.routeAt(t, msg, performance.now());
      },
      () => {
        if (!this.stopped) this.unavailableUnlessLeader(type, msg);
      },
    );
    return true;
  }

  /**
   * With no meta leader in sight, answers 10008 — once the meta group has been leaderless past the threshold
   * (a node just started or between meta elections waits that long), from one node only: the lowest id among
   * the nodes linked (`designated` false: the caller already chose this node among a group's members).
   */
  private unavailableUnlessLeader(type: string, msg: BusMessage, designated = true): boolean {
    if (this.metaLeaderKnown()) return false;
    const thresholdMs = this.options.leaderlessAnswerMs ?? LEADERLESS_ANSWER_MS;
    const leaderlessMs = this.leaderless.leaderlessForMs(metaGroupOf(this.env), false);
    const silenceMs = this.restarted ? this.startedMs + RESTART_SILENCE_MS - Date.now() : 0;
    const delayMs = Math.max(this.options.unavailableDelayMs ?? 250, thresholdMs - leaderlessMs, silenceMs);
    const timer = setTimeout(() => {
      if (this.stopped || this.metaLeaderKnown()) return;
      const self = this.env.self.raftNodeId;
      if (designated && !designatedAnswerer(this.env.peers().map((p) => p.raftNodeId), self, (id) => this.isActive(id))) return;
      this.js.respondError(msg.reply, type, ClusterErrors.unavailable());
    }, delayMs);
    timer.unref();
    return true;
  }

  /** StreamInfo's `cluster` block of the replica of `stream` on this node. */
  clusterBlockOf(stream: string): object | undefined {
    return this.replicaSet.byStream(stream)?.clusterInfo();
  }

  /**
   * nats-server's streamAlternates: the stream itself and every mirror of it in the account's catalogue
   * (`{ name, cluster }`), the stream first; none when it has no mirror.
   */
  alternatesOf(stream: string): object[] | undefined {
    const mirrors = this.meta.state
      .assignments()
      .filter((a) => a.config.mirror?.name === stream && a.config.mirror.external === undefined)
      .map((a) => a.config.name)
      .sort();
    if (mirrors.length === 0) return undefined;
    return [stream, ...mirrors].map((name) => ({ name, cluster: this.env.clusterName }));
  }

  // ---- ClusteredJetStreamView ----------------------------------------------------------------

  metaStatus(): RaftGroupStatus {
    return this.meta.status((id) => ({ active: this.isActive(id), agoMs: this.activeAgoMs(id) }));
  }

  metaLeaderName(): string {
    return this.metaLeaderKnown() ? this.meta.nameOf(this.meta.leaderId()) : '';
  }

  /** Meta voters once the group runs (the route count may include this node under an unrecognised name). */
  clusterSize(): number {
    const voters = this.meta.voters().length;
    return voters > 0 ? voters : this.env.expectedClusterSize;
  }

  streamAssignments(): StreamAssignment[] {
    return this.meta.state.assignments();
  }

  replicas(): StreamReplicaView[] {
    return this.replicaSet.all();
  }

  healthError(options: { metaOnly?: boolean } = {}): string | null {
    if (!this.meta.started || !this.metaLeaderKnown()) return 'JetStream has not established contact with a meta leader';
    if (options.metaOnly === true) return null;
    for (const r of this.replicaSet.all()) {
      const leader = r.leaderId();
      if (leader === NONE || !this.isActive(leader)) return `JetStream stream '$G > ${r.name}' is not current`;
    }
    return null;
  }

  async handOffLeaderships(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    // Wait only for hand-overs that can happen: R1 groups and refused step-downs have nobody to take over.
    const handing = this.replicaSet.all().filter((r) => r.isLeader() && r.assignment.peers.length > 1 && r.stepDown() === null);
    const metaHanding = this.meta.isLeader() && this.meta.stepDown((id) => this.isActive(id));
    const self = this.env.self.raftNodeId;
    // Done once another node leads each group (a replica stops serving at once, before the transfer happened).
    while (Date.now() < deadline) {
      if (!(metaHanding && this.meta.leaderId() === self) && !handing.some((r) => r.leaderId() === self)) return;
      await new Promise((resolve) => setTimeout(resolve, HANDOFF_POLL_MS));
    }
  }
}
