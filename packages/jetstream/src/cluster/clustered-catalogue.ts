// The catalogue in a cluster: the meta group's stream assignments, served by the meta leader. Changes run one
// at a time and go through the meta group; CREATE and UPDATE answer with the stream leader's own StreamInfo,
// LIST and INFO gather each stream's from its leader (as nats-server does).
import { randomBytes } from 'node:crypto';
import { SerialQueue } from '@flotilla/store';
import { JsErrors } from '../api/api-errors.js';
import type { OpenStreamInfo } from '../api/open-stream-info.js';
import { formatTimeNs, nowNs, ZERO_TIME } from '../api/time-format.js';
import { tierName, type AccountLimitsCheck } from '../catalogue/account-limits.js';
import { addStreamUsage, type AccountUsage, type Catalogue } from '../catalogue/catalogue.js';
import { sendStreamAdvisory, type AdvisorySink } from '../catalogue/stream-advisory.js';
import type { JetStreamLogger, MessageBus } from '../message-bus.js';
import { checkStreamUpdate, sameStreamConfig } from '../stream/stream-config.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import { subjectsCollide } from '../stream/subjects-collide.js';
import { SubjectIndex } from '../stream/subject-index.js';
import type { StreamAssignment } from './cluster-contracts.js';
import type { ClusteredJetStream } from './clustered-jetstream.js';
import { ClusterErrors } from './meta-errors.js';
import { placeReplicas, replacePeer, replacePeers, type NodeLoad, type SharedPlacementLoad, type Zones } from './meta-placement.js';
import { PlacementMisfit, PlacementRules } from './placement-tags.js';
import { jsError } from '../api/js-error-table.js';
import type { StreamMoveRequest } from './stream-move.js';
import { NONE, type NodeId } from '@flotilla/raft';

/** The nodes a stream's replicas may go to under its placement, and why others were passed over. */
interface PlacementScope {
  candidates: NodeId[];
  fits(id: NodeId): boolean;
  zones?: Zones;
  misfit: PlacementMisfit;
}

/** CREATE/UPDATE wait this long for the stream group's leader before answering with what is known. */
export const LEADER_WAIT_MS = 5_000;
/** LIST waits this long for each stream leader's StreamInfo (all at once). */
const LIST_WAIT_MS = 1_000;
/** The stream leader is asked for its StreamInfo this often while waiting. */
const PROBE_INTERVAL_MS = 25;
/** Catalogue changes queued on the meta leader beyond this many are refused. */
const MAX_PENDING_CHANGES = 1024;
const EMPTY = new Uint8Array(0);

export interface ClusteredCatalogueParts {
  readonly cluster: ClusteredJetStream;
  readonly bus: MessageBus;
  readonly log: JetStreamLogger;
  readonly advisories: AdvisorySink;
  /** StreamInfo of the replicas open on this node. */
  readonly infos: OpenStreamInfo;
  /** The account's limits, counted over this catalogue: the meta leader enforces them (jsClusteredStreamLimitsCheck). */
  readonly accountLimits?: AccountLimitsCheck;
  /** With accounts: the node's placement load over every account's catalogue (ClusterEnvironment.sharedLoad). */
  readonly sharedLoad?: SharedPlacementLoad;
}

/**
 * New peers for an existing group: once its members change, nobody founds it again (founder NONE), so neither a
 * newcomer placed first nor a former member placed back with an empty log starts it afresh, empty; every
 * member with an empty log waits for the leader's (see StreamAssignment.founder).
 */
export function withFounder(existing: StreamAssignment, peers: NodeId[]): { peers: NodeId[]; founder?: NodeId } {
  const same = peers.length === existing.peers.length && peers.every((p, i) => p === existing.peers[i]);
  return same ? { peers } : { peers, founder: NONE };
}

export class ClusteredCatalogue implements Catalogue {
  private readonly changes = new SerialQueue();

  constructor(private readonly parts: ClusteredCatalogueParts) {
    const shared = parts.sharedLoad;
    const account = parts.cluster.account;
    if (shared !== undefined && account !== undefined) shared.register(account, () => this.ownLoad());
    parts.cluster.catalogue = this;
  }

  private get cjs(): ClusteredJetStream {
    return this.parts.cluster;
  }

  // ---- reads ---------------------------------------------------------------------------------

  /**
   * The account's usage as nats-server reports it: every replica's bytes count (each server reports its own
   * store), so an R3 stream's bytes count three times. A stream's bytes and consumers come from its leader
   * (here, or asked as LIST does); a replica's bytes are the leader's. No `tiers`: nats-server lists them only
   * for tiered account limits, which need accounts (not served); the default tier's limits are unlimited.
   */
  async usage(): Promise<AccountUsage> {
    const usage: AccountUsage = { memory: 0, storage: 0, streams: 0, consumers: 0, tiers: {} };
    const assignments = this.cjs.meta.state.assignments();
    await Promise.all(
      assignments.map(async (a) => {
        const local = this.cjs.replicaSet.byGroupId(a.group);
        type Usage = { state?: { bytes?: number; consumer_count?: number } } | null;
        let info: Usage;
        if (local?.isLeader()) info = this.parts.infos.of(local.stream) as unknown as Usage;
        else info = ((await this.probe(a, LIST_WAIT_MS, false)) ?? (local !== undefined ? this.parts.infos.of(local.stream) : null)) as unknown as Usage;
        // a stream's bytes count on each of its replicas (nats-server's cluster usage)
        const bytes = (info?.state?.bytes ?? 0) * Math.max(1, a.peers.length);
        addStreamUsage(usage, tierName(a.config.num_replicas), a.config.storage, bytes, info?.state?.consumer_count ?? 0);
      }),
    );
    return usage;
  }

  /** In the catalogue's order. */
  names(subject: string | undefined): string[] {
    const all = this.cjs.meta.state.assignments();
    const matched = subject ? all.filter((a) => a.config.subjects.some((s) => subjectsCollide(subject, s))) : all;
    return matched.map((a) => a.config.name);
  }

  /** Each stream's info from its leader (as nats-server gathers them), else what this node knows. */
  infos(names: readonly string[]): Promise<object[]> {
    const assignments: StreamAssignment[] = [];
    for (const name of names) {
      const a = this.cjs.meta.state.assignment(name);
      if (a !== undefined) assignments.push(a);
    }
    return Promise.all(
      assignments.map(async (a) => {
        const local = this.cjs.replicaSet.byGroupId(a.group);
        if (local?.isLeader()) return this.parts.infos.of(local.stream);
        return (await this.probe(a, LIST_WAIT_MS, false)) ?? this.knownInfo(a);
      }),
    );
  }

  /** StreamInfo from the local replica when this node has one, else the catalogue's config and no state. */
  private knownInfo(a: StreamAssignment): object {
    const local = this.cjs.replicaSet.byGroupId(a.group);
    if (local !== undefined) return this.parts.infos.of(local.stream);
    return {
      config: a.config,
      created: a.created,
      state: { messages: 0, bytes: 0, first_seq: 0, first_ts: ZERO_TIME, last_seq: 0, last_ts: ZERO_TIME, consumer_count: 0 },
      cluster: { name: this.cjs.clusterName },
    };
  }

  // ---- changes -------------------------------------------------------------------------------

  /** Only check + propose run one at a time; waiting for the new group's leader overlaps other changes. */
  async create(cfg: StreamConfig): Promise<object> {
    return this.leaderInfo(await this.serial(() => this.assignNew(cfg)));
  }

  async update(requested: StreamConfig): Promise<object> {
    return this.leaderInfo(await this.serial(() => this.reassign(requested)));
  }

  delete(name: string): Promise<void> {
    return this.serial(async () => {
      const existing = this.cjs.meta.state.assignment(name);
      if (existing === undefined) throw JsErrors.streamNotFound();
      await this.cjs.meta.propose({ op: 'unassign', name, group: existing.group });
      sendStreamAdvisory(this.parts.advisories, 'DELETED', name);
    });
  }

  removePeer(name: string, peerName: string): Promise<void> {
    return this.serial(async () => {
      const existing = this.cjs.meta.state.assignment(name);
      if (existing === undefined) throw JsErrors.streamNotFound();
      const removed = this.cjs.nodeIdOf(peerName);
      if (removed === undefined || !existing.peers.includes(removed)) throw ClusterErrors.peerNotMember();
      const scope = this.placementScope(existing.config);
      const peers = replacePeer(existing.peers, removed, scope.candidates, this.load(), scope.zones);
      if (peers === null) throw ClusterErrors.noReplacementPeer();
      await this.cjs.meta.propose({ op: 'assign', assignment: { ...existing, ...withFounder(existing, peers) } });
    });
  }

  /**
   * SERVER.REMOVE's re-placement: every stream with a replica on `removed` gets another node in its place (one
   * that fits its placement), or shrinks when none is free. Streams are re-placed one at a time; a stream whose
   * only replica was there keeps its assignment (its data is nowhere else).
   */
  replaceServer(removed: NodeId): Promise<number> {
    return this.serial(async () => {
      let moved = 0;
      for (const a of this.cjs.meta.state.assignments()) {
        if (!a.peers.includes(removed)) continue;
        const scope = this.placementScope(a.config, [removed]);
        const peers = replacePeer(a.peers, removed, scope.candidates, this.load(), scope.zones);
        if (peers === null) continue;
        await this.cjs.meta.propose({ op: 'assign', assignment: { ...a, ...withFounder(a, peers) } });
        moved++;
      }
      return moved;
    });
  }

  /**
   * ACCOUNT.STREAM.MOVE: off `server` (one replica to another fitting node), or onto nodes with `tags` (every
   * replica that does not fit moves), `cluster` being this one. The stream's config is unchanged; the group
   * adds the new members, lets them catch up, then drops the old ones (stream-replica.ts), serving all along.
   * Answers the stream leader's StreamInfo, as an update does.
   */
  async move(name: string, req: StreamMoveRequest): Promise<object> {
    const assignment = await this.serial(async () => {
      const existing = this.cjs.meta.state.assignment(name);
      if (existing === undefined) throw JsErrors.streamNotFound();
      if (req.cluster !== undefined && req.cluster !== '' && req.cluster !== this.cjs.clusterName) throw ClusterErrors.noSuitablePeers();
      const tags = [...(existing.config.placement?.tags ?? []), ...(req.tags ?? [])];
      const cfg: StreamConfig = { ...existing.config, placement: { ...existing.config.placement, tags } };
      let peers: NodeId[] | null;
      let scope: PlacementScope;
      if (req.server !== undefined && req.server !== '') {
        const source = this.cjs.nodeIdOf(req.server);
        if (source === undefined || !this.cjs.meta.members().includes(source)) throw jsError('JSClusterServerNotMemberErr');
        if (!existing.peers.includes(source)) throw ClusterErrors.peerNotMember();
        scope = this.placementScope(cfg, [source]);
        const free = scope.candidates.filter((c) => !existing.peers.includes(c));
        const zones = scope.zones;
        peers = free.length === 0 ? null : replacePeer(existing.peers, source, free, this.load(), zones);
        if (peers !== null && peers.length < existing.peers.length) peers = null;
      } else {
        scope = this.placementScope(cfg);
        peers = replacePeers(existing.peers, existing.config.num_replicas, scope.candidates, this.load(), this.cjs.streamLeaderOf(existing), scope.fits, scope.zones);
      }
      if (peers === null) throw this.placementFailure(scope, existing.config.num_replicas);
      this.parts.log.info({ stream: name, from: existing.peers.map((p) => this.cjs.nameOf(p)), to: peers.map((p) => this.cjs.nameOf(p)) }, 'requested stream move');
      const next: StreamAssignment = { ...existing, ...withFounder(existing, peers), moveFrom: existing.moveFrom ?? existing.peers };
      await this.cjs.meta.propose({ op: 'assign', assignment: next });
      return next;
    });
    return this.leaderInfo(assignment);
  }

  /** ACCOUNT.STREAM.CANCEL_MOVE: back to the peers before the move, while the move is not complete (10129 after). */
  async cancelMove(name: string): Promise<object> {
    const existing = this.cjs.meta.state.assignment(name);
    if (existing === undefined) throw JsErrors.streamNotFound();
    const from = existing.moveFrom;
    if (from === undefined || (await this.moveComplete(existing))) throw jsError('JSStreamMoveNotInProgress');
    const assignment = await this.serial(async () => {
      const now = this.cjs.meta.state.assignment(name);
      if (now === undefined) throw JsErrors.streamNotFound();
      if (now.moveFrom === undefined) throw jsError('JSStreamMoveNotInProgress');
      const { moveFrom: _dropped, ...rest } = now;
      const next: StreamAssignment = { ...rest, ...withFounder(now, from) };
      await this.cjs.meta.propose({ op: 'assign', assignment: next });
      return next;
    });
    return this.leaderInfo(assignment);
  }

  /** The group's leader reports exactly the assigned peers, every one current: the move is done. */
  private async moveComplete(a: StreamAssignment): Promise<boolean> {
    const info = (await this.probe(a, LIST_WAIT_MS, false)) as { cluster?: { leader?: string; replicas?: Array<{ name: string; current: boolean }> } } | null;
    if (info?.cluster?.leader === undefined) return false;
    const names = [info.cluster.leader, ...(info.cluster.replicas ?? []).map((r) => r.name)].sort();
    const wanted = a.peers.map((p) => this.cjs.nameOf(p)).sort();
    return names.join() === wanted.join() && (info.cluster.replicas ?? []).every((r) => r.current);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    if (this.changes.pending >= MAX_PENDING_CHANGES) return Promise.reject(JsErrors.insufficientResources());
    return this.changes.run(fn);
  }

  /** Where new replicas go: the nodes' load over every account's catalogue when there are accounts. */
  private load(): NodeLoad {
    return this.parts.sharedLoad?.total() ?? this.ownLoad();
  }

  private ownLoad(): NodeLoad {
    const s = this.cjs.meta.state;
    return { replicas: s.replicaCounts(), leaders: s.preferredLeaderCounts() };
  }

  /** Through a SubjectIndex: linear in the subjects, where pairwise checks froze the node (2,000 × 10,000). */
  private overlapsOthers(cfg: StreamConfig): boolean {
    const index = new SubjectIndex();
    for (const a of this.cjs.meta.state.assignments()) if (a.config.name !== cfg.name) index.add(a.config.name, a.config.subjects);
    return index.overlaps(cfg.subjects);
  }

  /**
   * Placement is honoured or refused, never ignored: this cluster is the only one there is (no gateways), so
   * another cluster's name has no suitable peers (nats-server's answer too).
   */
  private checkPlacement(cfg: StreamConfig): void {
    const placement = cfg.placement;
    if (placement === undefined) return;
    if (placement.cluster !== undefined && placement.cluster !== '' && placement.cluster !== this.cjs.clusterName) throw ClusterErrors.noSuitablePeers();
  }

  /** The active nodes that fit `cfg`'s placement tags and the cluster's unique_tag (placement-tags.ts). */
  placementScope(cfg: StreamConfig, exclude: readonly NodeId[] = []): PlacementScope {
    const rules = new PlacementRules({ tags: cfg.placement?.tags, uniqueTag: this.cjs.uniqueTag });
    const misfit = new PlacementMisfit();
    const node = (id: NodeId): { id: NodeId; tags: readonly string[] } => ({ id, tags: this.cjs.tagsOf(id) });
    const candidates = this.cjs.placementCandidates().filter((id) => !exclude.includes(id) && rules.fits(node(id), misfit));
    const scope: PlacementScope = { candidates, misfit, fits: (id) => !exclude.includes(id) && rules.fits(node(id)) };
    if (rules.uniquePrefix !== undefined) scope.zones = { zoneOf: (id) => rules.zoneOf(node(id)) };
    return scope;
  }

  /** The placement's error when too few nodes fit: nats-server's reasons when tags were involved. */
  private placementFailure(scope: PlacementScope, count: number): Error {
    const m = scope.misfit;
    // Enough nodes fit the tags but too few failure domains among them.
    if (scope.zones !== undefined && scope.candidates.length >= count) m.uniqueTag = true;
    return m.uniqueTag || m.missing.size > 0 || m.excluded.size > 0 ? m.error() : ClusterErrors.noSuitablePeers();
  }

  /** Validates, places and records a new stream; resolves with its assignment (an identical one if it exists). */
  private async assignNew(cfg: StreamConfig): Promise<StreamAssignment> {
    const name = cfg.name;
    // As on one node, the account's limits come before the name lookup.
    this.parts.accountLimits?.checkCreate(cfg);
    const existing = this.cjs.meta.state.assignment(name);
    if (existing !== undefined) {
      if (!sameStreamConfig(existing.config, cfg)) throw JsErrors.streamNameInUse();
      return existing;
    }
    if (this.overlapsOthers(cfg)) throw JsErrors.subjectsOverlap();
    this.checkPlacement(cfg);
    const scope = this.placementScope(cfg);
    const peers = placeReplicas(cfg.num_replicas, scope.candidates, this.load(), scope.zones);
    if (peers === null) throw this.placementFailure(scope, cfg.num_replicas);
    const account = this.cjs.account;
    const assignment: StreamAssignment = {
      config: cfg,
      created: formatTimeNs(nowNs()),
      // The group id names the account too: every account's groups share this node's Raft log and transport.
      group: `S-${account === undefined ? '' : `${account}-`}${name}-${randomBytes(4).toString('hex')}`,
      peers,
      ...(account === undefined ? {} : { account }),
    };
    await this.cjs.meta.propose({ op: 'assign', assignment });
    sendStreamAdvisory(this.parts.advisories, 'CREATED', name);
    return assignment;
  }

  private async reassign(requested: StreamConfig): Promise<StreamAssignment> {
    const name = requested.name;
    const existing = this.cjs.meta.state.assignment(name);
    if (existing === undefined) throw JsErrors.streamNotFound();
    this.parts.accountLimits?.checkMaxBytes(requested);
    const next = checkStreamUpdate(existing.config, requested);
    this.parts.accountLimits?.checkUpdate(next, existing.config.num_replicas);
    if (this.overlapsOthers(next)) throw JsErrors.subjectsOverlap();
    this.checkPlacement(next);
    // A changed placement moves the replicas that no longer fit (nats-server moves the stream too).
    const scope = this.placementScope(next);
    const peers = replacePeers(existing.peers, next.num_replicas, scope.candidates, this.load(), this.cjs.streamLeaderOf(existing), scope.fits, scope.zones);
    if (peers === null) throw this.placementFailure(scope, next.num_replicas);
    const { moveFrom: _moveFrom, ...kept } = existing;
    const assignment: StreamAssignment = { ...kept, config: next, ...withFounder(existing, peers) };
    await this.cjs.meta.propose({ op: 'assign', assignment });
    sendStreamAdvisory(this.parts.advisories, 'UPDATED', name);
    return assignment;
  }

  // ---- the stream leader's StreamInfo --------------------------------------------------------

  /**
   * The StreamInfo the stream's leader answers once it leads with this config (so a publish right after
   * CREATE finds it); after LEADER_WAIT_MS, the catalogue's view.
   */
  private async leaderInfo(a: StreamAssignment): Promise<object> {
    const info = await this.probe(a, LEADER_WAIT_MS);
    if (info !== null) return info;
    this.parts.log.warn({ stream: a.config.name, group: a.group }, 'stream group has no leader yet; answering with the catalogue view');
    return this.knownInfo(a);
  }

  /**
   * The StreamInfo of the leader of `a`'s group (with `a`'s config when `sameConfig`), or null after timeoutMs.
   * Only that group's leader counts: right after a delete and re-create, the deleted group's leader may still
   * answer for the name for a moment.
   */
  private probe(a: StreamAssignment, timeoutMs: number, sameConfig = true): Promise<object | null> {
    const cfg = a.config;
    const bus = this.parts.bus;
    const inbox = `_INBOX.${randomBytes(12).toString('hex')}`;
    const subject = `$JS.API.STREAM.INFO.${cfg.name}`;
    return new Promise((resolve) => {
      let done = false;
      const finish = (v: object | null): void => {
        if (done) return;
        done = true;
        unsubscribe();
        clearInterval(interval);
        clearTimeout(timer);
        resolve(v);
      };
      const unsubscribe = bus.subscribe(inbox, (m) => {
        try {
          const body = JSON.parse(Buffer.from(m.data).toString('utf8')) as Record<string, unknown>;
          const cluster = body['cluster'] as { leader?: string; raft_group?: string } | undefined;
          if (body['error'] !== undefined || cluster?.leader === undefined || cluster.raft_group !== a.group) return;
          if (sameConfig && !sameStreamConfig(body['config'] as StreamConfig, cfg)) return;
          // STREAM.INFO's own fields (type, subjects paging) are not part of a create/update answer.
          for (const k of ['type', 'total', 'offset', 'limit']) delete body[k];
          finish(body);
        } catch {
          // not a StreamInfo: keep waiting
        }
      });
      const ask = (): void => bus.publish(subject, inbox, null, EMPTY);
      const interval = setInterval(ask, PROBE_INTERVAL_MS);
      const timer = setTimeout(() => finish(null), timeoutMs);
      ask();
    });
  }
}
