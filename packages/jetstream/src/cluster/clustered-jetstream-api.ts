// The meta leader's catalogue endpoints: INFO, STREAM.CREATE/UPDATE/DELETE/NAMES/LIST/PEER.REMOVE and
// META.LEADER.STEPDOWN, plus STREAM.LEADER.STEPDOWN on a stream leader. Catalogue changes run one at a time
// and go through the meta group; CREATE and UPDATE answer with the stream leader's own StreamInfo.
import { randomBytes } from 'node:crypto';
import { SerialQueue } from '@flotilla/store';
import { JsErrors } from '../api/api-errors.js';
import { RequestFields, isEmptyRequest, parseRequestBody } from '../api/request-body.js';
import { LIST_PAGE_LIMIT, NAMES_PAGE_LIMIT, parseCreateRequest, parseUpdateRequest } from '../api/stream-api.js';
import { formatTimeNs, nowNs, ZERO_TIME } from '../api/time-format.js';
import type { BusMessage } from '../message-bus.js';
import { checkStreamUpdate, sameStreamConfig } from '../stream/stream-config.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import { subjectsCollide } from '../stream/subjects-collide.js';
import { SubjectIndex } from '../stream/subject-index.js';
import type { StreamAssignment } from './cluster-contracts.js';
import type { LocalReplica } from './clustered-jetstream-replicas.js';
import type { ClusteredJetStream } from './clustered-jetstream.js';
import { ClusterErrors } from './meta-errors.js';
import { placeReplicas, replacePeer, resizePeers, type NodeLoad } from './meta-placement.js';

/** CREATE/UPDATE wait this long for the stream group's leader before answering with what is known. */
export const LEADER_WAIT_MS = 5_000;
/** LIST waits this long for each stream leader's StreamInfo (all at once). */
const LIST_WAIT_MS = 1_000;
/** The stream leader is asked for its StreamInfo this often while waiting. */
const PROBE_INTERVAL_MS = 25;
/** Catalogue changes queued on the meta leader beyond this many are refused. */
const MAX_PENDING_CHANGES = 1024;
const EMPTY = new Uint8Array(0);

export class ClusterApi {
  private readonly changes = new SerialQueue();

  constructor(private readonly cjs: ClusteredJetStream) {}

  private get js() {
    return this.cjs.js;
  }

  /** A catalogue request on the meta leader; `t` are the tokens after `$JS.API`. */
  handle(t: readonly string[], type: string, msg: BusMessage): void {
    const api = this.js.streamApi;
    switch (t[0]) {
      case 'INFO':
        void api.run(type, msg.reply, () => this.accountInfo());
        return;
      case 'META':
        void api.run(type, msg.reply, () => this.metaStepDown());
        return;
    }
    const name = t[2] ?? '';
    switch (t[1]) {
      case 'NAMES':
        void api.run(type, msg.reply, () => this.names(msg));
        return;
      case 'LIST':
        void api.run(type, msg.reply, () => this.list(msg));
        return;
      case 'CREATE':
        // Only check + propose run one at a time; waiting for the new group's leader overlaps other changes.
        void api.run(type, msg.reply, async () => ({ ...(await this.leaderInfo(await this.serial(() => this.create(name, msg)))), did_create: true }));
        return;
      case 'UPDATE':
        void api.run(type, msg.reply, async () => this.leaderInfo(await this.serial(() => this.update(name, msg))));
        return;
      case 'DELETE':
        void api.run(type, msg.reply, () => this.serial(() => this.delete(name, msg)));
        return;
      case 'PEER':
        void api.run(type, msg.reply, () => this.serial(() => this.removePeer(t[3] ?? '', msg)));
        return;
    }
  }

  /** STREAM.LEADER.STEPDOWN on the stream's leader. */
  streamStepDown(replica: LocalReplica, type: string, msg: BusMessage): void {
    void this.js.streamApi.run(type, msg.reply, () => {
      const err = replica.stepDown();
      if (err !== null) throw err;
      return { success: true };
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    if (this.changes.pending >= MAX_PENDING_CHANGES) return Promise.reject(JsErrors.insufficientResources());
    return this.changes.run(fn);
  }

  // ---- catalogue reads -----------------------------------------------------------------------

  /**
   * The account's usage as nats-server reports it: every replica's bytes count (each server reports its own
   * store), so an R3 stream's bytes count three times. A stream's bytes and consumers come from its leader
   * (here, or asked as LIST does); a replica's bytes are the leader's. No `tiers`: nats-server lists them only
   * for tiered account limits, which need accounts (not served); the default tier's limits are unlimited.
   */
  private async accountInfo(): Promise<object> {
    const base = this.js.accountInfo() as Record<string, unknown>;
    let memory = 0;
    let storage = 0;
    let consumers = 0;
    const assignments = this.cjs.meta.state.assignments();
    await Promise.all(
      assignments.map(async (a) => {
        const local = this.cjs.replicaSet.byGroupId(a.group);
        type Usage = { state?: { bytes?: number; consumer_count?: number } } | null;
        let info: Usage;
        if (local?.isLeader()) info = this.js.streamApi.info(local.stream) as unknown as Usage;
        else info = ((await this.probe(a, LIST_WAIT_MS, false)) ?? (local !== undefined ? this.js.streamApi.info(local.stream) : null)) as unknown as Usage;
        const bytes = (info?.state?.bytes ?? 0) * Math.max(1, a.peers.length);
        if (a.config.storage === 'memory') memory += bytes;
        else storage += bytes;
        consumers += info?.state?.consumer_count ?? 0;
      }),
    );
    return { ...base, memory, storage, streams: assignments.length, consumers };
  }

  private matching(subject: string | undefined): StreamAssignment[] {
    const all = this.cjs.meta.state.assignments();
    return subject ? all.filter((a) => a.config.subjects.some((s) => subjectsCollide(subject, s))) : all;
  }

  private names(msg: BusMessage): object {
    const f = new RequestFields(parseRequestBody(msg.data));
    const matched = this.matching(f.string('subject'));
    const offset = Math.min(f.int('offset') ?? 0, matched.length);
    const streams = matched.slice(offset, offset + NAMES_PAGE_LIMIT).map((a) => a.config.name);
    return { total: matched.length, offset, limit: NAMES_PAGE_LIMIT, streams };
  }

  /** Each stream's info from its leader (as nats-server gathers them), else what this node knows. */
  private async list(msg: BusMessage): Promise<object> {
    const f = new RequestFields(parseRequestBody(msg.data));
    const matched = this.matching(f.string('subject'));
    const offset = Math.min(f.int('offset') ?? 0, matched.length);
    const streams = await Promise.all(
      matched.slice(offset, offset + LIST_PAGE_LIMIT).map(async (a) => {
        const local = this.cjs.replicaSet.byGroupId(a.group);
        if (local?.isLeader()) return this.js.streamApi.info(local.stream);
        return (await this.probe(a, LIST_WAIT_MS, false)) ?? this.knownInfo(a);
      }),
    );
    return { total: matched.length, offset, limit: LIST_PAGE_LIMIT, streams };
  }

  /** StreamInfo from the local replica when this node has one, else the catalogue's config and no state. */
  private knownInfo(a: StreamAssignment): object {
    const local = this.cjs.replicaSet.byGroupId(a.group);
    if (local !== undefined) return this.js.streamApi.info(local.stream);
    return {
      config: a.config,
      created: a.created,
      state: { messages: 0, bytes: 0, first_seq: 0, first_ts: ZERO_TIME, last_seq: 0, last_ts: ZERO_TIME, consumer_count: 0 },
      cluster: { name: this.cjs.clusterName },
    };
  }

  // ---- catalogue changes ---------------------------------------------------------------------

  private load(): NodeLoad {
    const s = this.cjs.meta.state;
    return { replicas: s.replicaCounts(), leaders: s.preferredLeaderCounts() };
  }

  /** Through a SubjectIndex: linear in the subjects, where pairwise checks froze the node (2,000 × 10,000). */
  private overlapsOthers(cfg: StreamConfig): boolean {
    const index = new SubjectIndex();
    for (const a of this.cjs.meta.state.assignments()) if (a.config.name !== cfg.name) index.add(a.config.name, a.config.subjects);
    return index.overlaps(cfg.subjects);
  }

  /** Validates, places and records a new stream; resolves with its assignment (an identical one if it exists). */
  private async create(name: string, msg: BusMessage): Promise<StreamAssignment> {
    const cfg = parseCreateRequest(name, msg.data);
    const existing = this.cjs.meta.state.assignment(name);
    if (existing !== undefined) {
      if (!sameStreamConfig(existing.config, cfg)) throw JsErrors.streamNameInUse();
      return existing;
    }
    if (this.overlapsOthers(cfg)) throw JsErrors.subjectsOverlap();
    const peers = placeReplicas(cfg.num_replicas, this.cjs.placementCandidates(), this.load());
    if (peers === null) throw ClusterErrors.noSuitablePeers();
    const assignment: StreamAssignment = {
      config: cfg,
      created: formatTimeNs(nowNs()),
      group: `S-${name}-${randomBytes(4).toString('hex')}`,
      peers,
    };
    await this.cjs.meta.propose({ op: 'assign', assignment });
    this.streamAdvisory('CREATED', name, 'create');
    return assignment;
  }

  private async update(name: string, msg: BusMessage): Promise<StreamAssignment> {
    const requested = parseUpdateRequest(name, msg.data);
    const existing = this.cjs.meta.state.assignment(name);
    if (existing === undefined) throw JsErrors.streamNotFound();
    const next = checkStreamUpdate(existing.config, requested);
    if (this.overlapsOthers(next)) throw JsErrors.subjectsOverlap();
    const peers = resizePeers(existing.peers, next.num_replicas, this.cjs.placementCandidates(), this.load(), this.cjs.streamLeaderOf(existing));
    if (peers === null) throw ClusterErrors.noSuitablePeers();
    const assignment: StreamAssignment = { ...existing, config: next, peers };
    await this.cjs.meta.propose({ op: 'assign', assignment });
    this.streamAdvisory('UPDATED', name, 'modify');
    return assignment;
  }

  private async delete(name: string, msg: BusMessage): Promise<object> {
    if (!isEmptyRequest(msg.data)) throw JsErrors.notEmptyRequest();
    const existing = this.cjs.meta.state.assignment(name);
    if (existing === undefined) throw JsErrors.streamNotFound();
    await this.cjs.meta.propose({ op: 'unassign', name, group: existing.group });
    this.streamAdvisory('DELETED', name, 'delete');
    return { success: true };
  }

  private async removePeer(name: string, msg: BusMessage): Promise<object> {
    const f = new RequestFields(parseRequestBody(msg.data));
    const peerName = f.string('peer') ?? '';
    const existing = this.cjs.meta.state.assignment(name);
    if (existing === undefined) throw JsErrors.streamNotFound();
    const removed = this.cjs.nodeIdOf(peerName);
    if (removed === undefined || !existing.peers.includes(removed)) throw ClusterErrors.peerNotMember();
    const peers = replacePeer(existing.peers, removed, this.cjs.placementCandidates(), this.load());
    if (peers === null) throw ClusterErrors.noReplacementPeer();
    await this.cjs.meta.propose({ op: 'assign', assignment: { ...existing, peers } });
    return { success: true };
  }

  private metaStepDown(): object {
    if (!this.cjs.meta.stepDown((id) => this.cjs.isActive(id))) throw ClusterErrors.noReplacementPeer();
    return { success: true };
  }

  // ---- helpers -------------------------------------------------------------------------------

  /**
   * The StreamInfo the stream's leader answers once it leads with this config (so a publish right after
   * CREATE finds it); after LEADER_WAIT_MS, the catalogue's view.
   */
  private async leaderInfo(a: StreamAssignment): Promise<object> {
    const info = await this.probe(a, LEADER_WAIT_MS);
    if (info !== null) return info;
    this.js.log.warn({ stream: a.config.name, group: a.group }, 'stream group has no leader yet; answering with the catalogue view');
    return this.knownInfo(a);
  }

  /**
   * The StreamInfo of the leader of `a`'s group (with `a`'s config when `sameConfig`), or null after timeoutMs.
   * Only that group's leader counts: right after a delete and re-create, the deleted group's leader may still
   * answer for the name for a moment.
   */
  private probe(a: StreamAssignment, timeoutMs: number, sameConfig = true): Promise<object | null> {
    const cfg = a.config;
    const bus = this.js.bus;
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

  private streamAdvisory(kind: 'CREATED' | 'UPDATED' | 'DELETED', name: string, action: string): void {
    const domain = this.js.domain;
    this.js.advisory(`$JS.EVENT.ADVISORY.STREAM.${kind}.${name}`, {
      type: 'io.nats.jetstream.advisory.v1.stream_action',
      id: randomBytes(11).toString('hex'),
      timestamp: formatTimeNs(nowNs()),
      stream: name,
      action,
      ...(domain ? { domain } : {}),
    });
  }
}
