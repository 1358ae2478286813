// JetStream on this node, wired: one catalogue (local files on a single node, the meta group in a cluster),
// the streams open here, their consumers, and the `$JS.API.>` subscription. This is the composition root:
// the only module that imports both the local and the clustered implementations.
import type { ApiError } from './api/api-error.js';
import { serveLocally, type LocalDispatch } from './api/api-dispatch.js';
import { endpointOf } from './api/api-endpoints.js';
import { accountInfoJson, type ApiStats, type ReservedBytes, type TiersView } from './api/account-info.js';
import { directGet } from './api/direct-get.js';
import { mirrorServingDirect } from './topology/mirror-direct.js';
import { OpenStreamInfo } from './api/open-stream-info.js';
import { ResponseType, StreamApi, type StreamApiContext } from './api/stream-api.js';
import type { Catalogue } from './catalogue/catalogue.js';
import { OpenStreams } from './catalogue/open-streams.js';
import { StorageLimits } from './catalogue/storage-limits.js';
import { AccountLimitsCheck, UNLIMITED_ACCOUNT_LIMITS } from './catalogue/account-limits.js';
import { ConsumerService } from './consumer/consumer-service.js';
import type { JetStreamContext } from './jetstream-context.js';
import type { JetStreamServiceOptions } from './jetstream-options.js';
import type { MessageBus, BusMessage, JetStreamLogger } from './message-bus.js';
import type { StreamHandle } from './stream/stream-handle.js';
import type { Stream, StreamHost } from './stream/stream.js';
import type { ClusteredJetStreamView, ClusterObserver } from './cluster/cluster-contracts.js';
import { AccountUsageGossip } from './cluster/account-usage-gossip.js';
import { ClusteredCatalogue } from './cluster/clustered-catalogue.js';
import { ClusteredJetStream, type ClusteredJetStreamHost } from './cluster/clustered-jetstream.js';
import { ReplicaConsumerHooks } from './cluster/clustered-jetstream-consumers.js';
import { ReplicatedStreamConsumers } from './cluster/consumer-replication-streams.js';
import { systemClock } from './consumer/clock.js';
import { LocalConsumerFiles } from './local/local-consumer-files.js';
import { ReplicaStreams } from './cluster/replica-streams.js';
import type { StreamConfig } from './stream/stream-config-types.js';
import { LocalCatalogue } from './local/local-catalogue.js';
import { serveSnapshot, type BackupContext } from './backup/stream-snapshot.js';
import { RESTORE_RESPONSE, serveRestore } from './backup/stream-restore.js';
import { restoreBytesError } from './backup/restore-limits.js';
import { JsErrors } from './api/api-errors.js';
import { ApiAuditTrail } from './advisories/api-audit-trail.js';
import { advisoryKindOf } from './advisories/jetstream-events.js';

export type { JetStreamServiceOptions } from './jetstream-options.js';

export class JetStreamService implements JetStreamContext, StreamHost, StreamApiContext, ClusteredJetStreamHost {
  readonly consumers: ConsumerService;
  /** The streams open on this node (every stream alone; this node's replicas in a cluster). */
  private readonly table = new OpenStreams();
  private readonly storage: StorageLimits;
  /** This account's JetStream limits (unlimited for the global account without accounts). */
  readonly accountLimits: AccountLimitsCheck;
  readonly streamApi: StreamApi;
  /** The single-node catalogue; null in a cluster. */
  private readonly local: LocalCatalogue | null;
  /** The cluster side (meta group, replicas, who answers what); null on a single node. */
  private readonly clustered: ClusteredJetStream | null;
  /** What the API table's handlers run on (api/api-dispatch.ts). */
  private readonly localApi: LocalDispatch;
  /** In a cluster with accounts: the account's usage on every node (publishes and /jsz read it). */
  private usageGossip: AccountUsageGossip | null = null;
  /** Cluster metrics hooks (set by the server's metrics before start); read by every stream replica. */
  clusterObserver: ClusterObserver | undefined;
  /** Metrics hook: every API error answer, with its response type (`io.nats.jetstream.api.v1.…_response`). */
  apiErrorObserver: ((type: string, errCode: number) => void) | undefined;
  /** Metrics hook: every advisory or metric event raised, listened to or not, by kind (advisoryKindOf). */
  advisoryObserver: ((kind: string) => void) | undefined;
  private unsubscribeApi: Array<() => void> = [];
  private apiTotal = 0;
  private apiErrors = 0;
  /** `$JS.EVENT.ADVISORY.API`: each answered request, while someone listens. */
  private readonly audit: ApiAuditTrail;

  constructor(
    readonly bus: MessageBus,
    readonly options: JetStreamServiceOptions,
    readonly log: JetStreamLogger,
  ) {
    this.audit = new ApiAuditTrail(bus, options.serverName, () => this.domain);
    this.storage = new StorageLimits(options, this.table, options.serverStreams ?? this.table);
    options.serverStreams?.add(this.table);
    const limits = options.accountLimits ?? UNLIMITED_ACCOUNT_LIMITS;
    // In a cluster streams are counted in the meta catalogue (every node's), not in this node's replicas.
    this.accountLimits =
      options.cluster === undefined
        ? new AccountLimitsCheck(limits, this.table, this.table, false, options.accountTiers)
        : new AccountLimitsCheck(limits, this.table, { values: () => this.catalogueStreams() }, true, options.accountTiers);
    this.consumers = new ConsumerService(this, systemClock, new LocalConsumerFiles(log));
    let catalogue: Catalogue;
    let infos: OpenStreamInfo;
    if (options.cluster === undefined) {
      this.clustered = null;
      infos = new OpenStreamInfo(this.consumers, options.domain, null);
      this.local = new LocalCatalogue({
        options,
        log,
        streams: this.table,
        streamHost: this,
        consumers: this.consumers,
        storage: this.storage,
        accountLimits: this.accountLimits,
        advisories: this,
        infos,
      });
      catalogue = this.local;
    } else {
      this.local = null;
      const replicaConsumers = new ReplicaConsumerHooks(new ReplicatedStreamConsumers(this.consumers), log);
      this.clustered = new ClusteredJetStream(this, {
        env: options.cluster,
        replicaStreams: new ReplicaStreams(this.table, this.consumers, replicaConsumers),
        replicaConsumers,
      });
      this.clustered.ingress.relayObserver = (reply, data) => this.audit.answered(reply, data);
      infos = new OpenStreamInfo(this.consumers, options.domain, this.clustered);
      const account = options.cluster.account;
      // Every account gossips (its /jsz figures are the cluster's, as nats-server's); without accounts there is
      // nothing to check ($G is unlimited) and none.
      if (account !== undefined) {
        const env = options.cluster;
        const gossip = new AccountUsageGossip({
          bus: options.systemBus ?? bus,
          account,
          selfName: env.self.name,
          local: () => this.table.storageBytes(),
          isPeer: (name) => env.peers().some((p) => p.name === name),
        });
        this.usageGossip = gossip;
        this.accountLimits.clusterUsage = () => gossip.total();
      }
      catalogue = new ClusteredCatalogue({
        cluster: this.clustered,
        bus,
        log,
        advisories: this,
        infos,
        accountLimits: this.accountLimits,
        ...(options.cluster.sharedLoad !== undefined ? { sharedLoad: options.cluster.sharedLoad } : {}),
      });
    }
    this.streamApi = new StreamApi(this, catalogue, this.table, infos);
    this.localApi = {
      streams: this.streamApi,
      consumers: this.consumers,
      clustered: this.clustered !== null,
      directGet: (name, t, msg) => this.serveDirectGet(name, t, msg),
      backups: this.backupApi(infos),
    };
  }

  /** STREAM.SNAPSHOT serves a stream open here (the leader's in a cluster); STREAM.RESTORE one node's catalogue. */
  private backupApi(infos: OpenStreamInfo): NonNullable<LocalDispatch['backups']> {
    const ctx: BackupContext = { bus: this.bus, log: this.log, streams: this.table, consumers: this.consumers, infos, advisories: this, respond: (r, t, b) => this.respond(r, t, b), respondError: (r, t, e, x) => this.respondError(r, t, e, x) };
    const local = this.local;
    return {
      snapshot: (name, msg) => serveSnapshot(ctx, name, msg),
      restore: async (name, msg) => {
        if (local === null) return this.respondError(msg.reply, RESTORE_RESPONSE, JsErrors.notImplemented('STREAM.RESTORE in a cluster'));
        serveRestore(ctx, local, {
          checkConfig: (cfg) => this.accountLimits.checkCreate(cfg),
          bytesError: (cfg, bytes) => restoreBytesError(this.accountLimits.select(cfg.num_replicas)?.limits ?? this.accountLimits.limits, this.table, cfg, bytes),
        }, name, msg);
      },
    };
  }

  /** Monitoring and shutdown's view of clustered JetStream; null on a single node. */
  /** The catalogue's streams (name and config), which the cluster's limit checks count. */
  private catalogueStreams(): IterableIterator<{ name: string; config: StreamConfig }> {
    return (this.clustered?.meta.state.assignments() ?? []).map((a) => ({ name: a.config.name, config: a.config })).values();
  }

  get cluster(): ClusteredJetStreamView | null {
    return this.clustered;
  }

  get domain(): string | undefined {
    return this.options.domain || undefined;
  }

  /** Loads every persisted stream (single node) or joins the meta group (cluster), then serves the API. */
  async start(): Promise<void> {
    if (this.clustered !== null) {
      this.subscribeApi();
      this.usageGossip?.start();
      // Replicas open as the meta log is applied; until a meta leader exists the API answers 10008.
      this.clustered.start();
      return;
    }
    await this.local?.load();
    this.subscribeApi();
  }

  private subscribeApi(): void {
    const handler = (msg: BusMessage): void => this.onApiRequest(msg);
    this.unsubscribeApi.push(this.bus.subscribe('$JS.API.>', handler));
    if (this.domain) this.unsubscribeApi.push(this.bus.subscribe(`$JS.${this.domain}.API.>`, handler));
  }

  async stop(): Promise<void> {
    for (const u of this.unsubscribeApi.splice(0)) u();
    this.usageGossip?.stop();
    await this.local?.settled();
    if (this.clustered !== null) {
      // Consumers first, while their streams' Raft groups can still take a last state proposal.
      await this.consumers.stop();
      await this.clustered.stop();
    }
    this.table.stopAll();
    await this.consumers.stop();
    await this.table.closeAll();
    this.options.serverStreams?.remove(this.table);
  }

  // ---- JetStreamContext -------------------------------------------------------------------------

  stream(name: string): StreamHandle | undefined {
    return this.table.get(name);
  }

  streamByName(name: string): Stream | undefined {
    return this.table.get(name);
  }

  streams(): Iterable<StreamHandle> {
    return this.table.values();
  }

  respond(reply: string | null, type: string, body: object): void {
    if (reply === null) return;
    const text = JSON.stringify({ type, ...body });
    this.bus.publish(reply, null, null, Buffer.from(text));
    this.audit.answered(reply, text);
  }

  respondError(reply: string | null, type: string, error: ApiError, extra?: object): void {
    this.apiErrors++;
    this.apiErrorObserver?.(type, error.errCode);
    if (reply === null) return;
    const text = JSON.stringify({ type, error: error.toJSON(), ...extra });
    this.bus.publish(reply, null, null, Buffer.from(text));
    this.audit.answered(reply, text);
  }

  /** The stream's consumers held here, running or replicated (stream replicas' leader-elected advisories). */
  storedConsumerNames(stream: string): string[] {
    const stored = this.consumers.placementOf(stream)?.storedConsumers?.();
    return stored !== undefined ? stored.map((c) => c.meta.name).sort() : this.consumers.consumersOf(stream).map((c) => c.name);
  }

  advisory(subject: string, body: object): void {
    this.advisoryObserver?.(advisoryKindOf(subject));
    if (!this.bus.hasInterest(subject)) return;
    this.bus.publish(subject, null, null, Buffer.from(JSON.stringify(body)));
  }

  apiStats(): ApiStats {
    return { total: this.apiTotal, errors: this.apiErrors };
  }

  /** `$JS.API.INFO`'s body over the streams open on this node (monitoring reads its `api` statistics). */
  accountInfo(): object {
    return accountInfoJson(this.table.usage(this.consumers), this.apiStats(), this.domain, this.accountLimits.limits, this.reservedBytes(), this.tiersView());
  }

  /** With tiered limits: each tier's limits and reservations (nats-server reports them on a cluster too). */
  tiersView(): TiersView | undefined {
    const limits = this.accountLimits.tiers;
    if (limits === undefined) return undefined;
    return { limits, reserved: (tier) => this.accountLimits.reserved(tier) };
  }

  /** In a cluster with accounts: the account's bytes on every node (as last reported); null otherwise. */
  usageOnEveryNode(): { memory: number; storage: number } | null {
    return this.usageGossip?.total() ?? null;
  }

  /** Single node: the max_bytes of the account's streams. A cluster reports none (yet): this node holds only its replicas. */
  reservedBytes(): ReservedBytes {
    // with tiers, nats-server's JetStreamUsage reports the catalogue's reservations on a cluster too
    return this.clustered === null || this.accountLimits.tiers !== undefined ? this.accountLimits.reserved() : { memory: 0, storage: 0 };
  }

  // ---- StreamHost ---------------------------------------------------------------------------------

  streamPurged(stream: Stream): void {
    this.consumers.streamPurged(stream);
  }

  hasConsumerInterest(stream: Stream, subject: string): boolean {
    return this.consumers.hasInterest(stream.name, subject);
  }

  storageExceeded(kind: 'file' | 'memory'): boolean {
    return this.storage.exceeded(kind);
  }

  accountLimitExceeded(kind: 'file' | 'memory', subject: string, headerBytes: number, dataBytes: number, replicas: number): boolean {
    return this.accountLimits.publishExceeds(kind, subject, headerBytes, dataBytes, replicas);
  }

  // ---- API dispatch -------------------------------------------------------------------------------

  private onApiRequest(msg: BusMessage): void {
    const all = msg.subject.split('.');
    // `$JS.API.…` or `$JS.<domain>.API.…`
    const tokens = all[1] === 'API' ? all.slice(2) : all.slice(3);
    if (tokens.length === 0) return;
    const endpoint = endpointOf(tokens);
    this.apiTotal++;
    // Pull requests and direct gets are served outside the API (nats-server audits neither).
    // Only where the request entered (a cluster's other nodes get copies, answered through this node's relay).
    if (endpoint !== undefined && endpoint.outsideApiStats !== true && msg.fromPeer === undefined) this.audit.requested(msg.subject, msg.reply, msg.data);
    let served = true;
    try {
      served = this.clustered !== null ? this.clustered.route(tokens, msg) : this.dispatchLocal(tokens, msg, endpoint);
    } catch (err) {
      // Never let a handler's bug escape into the publisher's connection.
      this.log.error({ subject: msg.subject, err: String(err) }, 'jetstream api handler failed');
    }
    // Unknown subjects get no reply and are not counted; nor are pull requests and direct gets, which
    // nats-server serves from the consumer's / stream's own subscription, outside its API statistics.
    if (!served || endpoint?.outsideApiStats === true) this.apiTotal--;
  }

  /** Serves a request from this node's own streams (alone: every request; cluster: those this node answers). */
  dispatchLocal(t: readonly string[], msg: BusMessage, endpoint = endpointOf(t)): boolean {
    return endpoint !== undefined && serveLocally(endpoint, this.localApi, t, msg);
  }

  /** DIRECT.GET: none when the stream is not here or does not allow direct gets (nats-server's stream subscribes only then). */
  private serveDirectGet(name: string, t: readonly string[], msg: BusMessage): boolean {
    let stream = this.table.get(name);
    // mirror_direct: a mirror that has caught up answers for its origin when the origin is not served here
    // (nats-server's mirror joins the origin's direct-get queue group; one member answers).
    if (stream === undefined || !stream.config.allow_direct) stream = mirrorServingDirect(this.table.values(), name);
    if (stream === undefined || !(stream.config.allow_direct || stream.config.mirror_direct)) return false;
    directGet(this.bus, stream, t, msg).catch((err: unknown) =>
      this.log.warn({ err: String(err), stream: stream.name }, 'direct get failed'),
    );
    return true;
  }
}
