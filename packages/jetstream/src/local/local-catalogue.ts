// The single-node catalogue: the stream records under `<storeDir>/streams/` (catalogue/stream-catalogue.ts)
// and the streams they open. Create, update and delete run one at a time, so checks and changes do not
// interleave.
import { mkdir } from 'node:fs/promises';
import { FileStore, MemoryStore, SerialQueue, type MessageStore, type SyncPolicy } from '@flotilla/store';
import { JsErrors } from '../api/api-errors.js';
import type { OpenStreamInfo } from '../api/open-stream-info.js';
import { formatTimeNs, nowNs } from '../api/time-format.js';
import type { AccountUsage, Catalogue } from '../catalogue/catalogue.js';
import type { ConsumerCounts, OpenStreams } from '../catalogue/open-streams.js';
import type { StorageLimits } from '../catalogue/storage-limits.js';
import type { AccountLimitsCheck } from '../catalogue/account-limits.js';
import { sendStreamAdvisory, type AdvisorySink } from '../catalogue/stream-advisory.js';
import { loadStreams, messagesDir, removeStream, saveStream, streamDir } from '../catalogue/stream-catalogue.js';
import type { JetStreamLogger } from '../message-bus.js';
import { checkStreamUpdate, sameStreamConfig } from '../stream/stream-config.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import { messageTtlNs } from '../stream/message-ttl.js';
import { SubjectIndex } from '../stream/subject-index.js';
import { subjectsCollide } from '../stream/subjects-collide.js';
import { Stream, storeLimitsOf, type StreamHost } from '../stream/stream.js';
import { localStreamWriter } from './local-stream-writer.js';
import { writeConsumerFiles, type StoredConsumerFiles } from '../backup/restored-consumers.js';
import { join } from 'node:path';

/** Stream create/update/delete wait in one queue; beyond this many the request is refused. */
const MAX_PENDING_MUTATIONS = 4096;

/** What the local catalogue tells about the streams it opens, changes and removes. */
export interface LocalStreamConsumers extends ConsumerCounts {
  streamAdded(stream: Stream): Promise<void>;
  streamUpdated(stream: Stream): void;
  streamRemoved(stream: Stream): Promise<void>;
}

export interface LocalCatalogueOptions {
  readonly storeDir: string;
  /** File stores: `always` (default) fsyncs before an ack; `{intervalMs}` syncs periodically. */
  readonly fileSync?: SyncPolicy;
}

export interface LocalCatalogueParts {
  readonly options: LocalCatalogueOptions;
  readonly log: JetStreamLogger;
  /** The table this catalogue fills: on a single node every stream is open. */
  readonly streams: OpenStreams;
  /** What every stream it opens is built with. */
  readonly streamHost: StreamHost;
  readonly consumers: LocalStreamConsumers;
  readonly storage: StorageLimits;
  /** The account's JetStream limits; absent: none (the global account without accounts). */
  readonly accountLimits?: AccountLimitsCheck;
  readonly advisories: AdvisorySink;
  readonly infos: OpenStreamInfo;
}

export class LocalCatalogue implements Catalogue {
  /** Every stream's subjects for the overlap check; null after any change to the table (rebuilt on use). */
  private subjectIndex: SubjectIndex | null = null;
  private readonly mutations = new SerialQueue();

  constructor(private readonly parts: LocalCatalogueParts) {}

  private get streams(): OpenStreams {
    return this.parts.streams;
  }

  /** Opens every persisted stream (one that fails to load is logged and left out). */
  async load(): Promise<void> {
    const { options, log } = this.parts;
    const records = await loadStreams(options.storeDir, (obj, msg) => log.warn(obj, msg));
    for (const rec of records) {
      try {
        const store = await this.openStore(rec.config, rec.dir);
        const stream = new Stream(this.parts.streamHost, rec.config, rec.created, rec.dir, store, localStreamWriter(this.parts.streamHost));
        await stream.start();
        this.streams.set(stream);
        this.subjectIndex = null;
        await this.parts.consumers.streamAdded(stream);
      } catch (err) {
        log.error({ stream: rec.config.name, err: String(err) }, 'stream could not be loaded');
      }
    }
    log.info({ streams: this.streams.size }, 'streams loaded');
  }

  /** Resolves once no create/update/delete is queued or running. */
  async settled(): Promise<void> {
    await this.mutations.idle();
    this.subjectIndex = null;
  }

  // ---- Catalogue: reads ----------------------------------------------------------------------

  /** Sorted by name. */
  names(subject: string | undefined): string[] {
    const all = [...this.streams.values()];
    const out = subject ? all.filter((s) => s.config.subjects.some((x) => subjectsCollide(subject, x))) : all;
    return out.map((s) => s.name).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  async infos(names: readonly string[]): Promise<object[]> {
    const out: object[] = [];
    for (const name of names) {
      const stream = this.streams.get(name);
      if (stream !== undefined) out.push(this.parts.infos.of(stream));
    }
    return out;
  }

  async usage(): Promise<AccountUsage> {
    return this.streams.usage(this.parts.consumers);
  }

  // ---- Catalogue: changes (serialised) -------------------------------------------------------

  /** Creates the stream, or returns the existing one when its config is identical (10058 otherwise). */
  async create(cfg: StreamConfig): Promise<object> {
    if (cfg.num_replicas > 1) throw JsErrors.replicasNotSupported();
    return this.parts.infos.of(await this.createStream(cfg));
  }

  async update(requested: StreamConfig): Promise<object> {
    return this.parts.infos.of(await this.updateStream(requested));
  }

  delete(name: string): Promise<void> {
    return this.serial(async () => {
      const stream = this.streams.get(name);
      if (stream === undefined) throw JsErrors.streamNotFound();
      stream.stop();
      this.streams.delete(name);
      this.subjectIndex = null;
      await this.parts.consumers.streamRemoved(stream);
      await stream.store.close().catch(() => undefined);
      await removeStream(stream.dir);
      sendStreamAdvisory(this.parts.advisories, 'DELETED', name);
    });
  }

  /** A stream on one node has no peers to move between. */
  async removePeer(): Promise<void> {
    throw JsErrors.clusteringRequired();
  }

  private createStream(cfg: StreamConfig): Promise<Stream> {
    return this.serial(async () => {
      // nats-server checks the account's limits before it looks for a stream of that name.
      this.parts.accountLimits?.checkCreate(cfg);
      const existing = this.streams.get(cfg.name);
      if (existing !== undefined) {
        if (sameStreamConfig(existing.config, cfg)) return existing;
        throw JsErrors.streamNameInUse();
      }
      // The request was parsed and checked in this turn: let other clients in before the next long step.
      await yieldToIo();
      if (this.overlapsOthers(cfg)) throw JsErrors.subjectsOverlap();
      this.parts.storage.checkReservation(cfg);
      const dir = streamDir(this.parts.options.storeDir, cfg.name);
      // A directory left by an interrupted delete must not leak old messages into the new stream.
      await removeStream(dir);
      const store = await this.openStore(cfg, dir);
      if (cfg.first_seq !== undefined && cfg.first_seq > 1) await store.skipMsgs(1, cfg.first_seq - 1);
      const created = formatTimeNs(nowNs());
      try {
        // Like standalone nats-server, memory streams are not recreated at start: no record for them
        // (their directory still holds consumer state while they live, and is cleared at start).
        if (cfg.storage === 'file') await saveStream(dir, { config: cfg, created });
        else await mkdir(dir, { recursive: true });
      } catch (err) {
        await store.close().catch(() => undefined);
        throw err;
      }
      const stream = new Stream(this.parts.streamHost, cfg, created, dir, store, localStreamWriter(this.parts.streamHost));
      await stream.start();
      this.streams.set(stream);
      this.subjectIndex?.add(cfg.name, cfg.subjects); // a create only adds: no rebuild
      await this.parts.consumers.streamAdded(stream);
      sendStreamAdvisory(this.parts.advisories, 'CREATED', cfg.name);
      return stream;
    });
  }

  /**
   * STREAM.RESTORE: a new stream `cfg` whose store is filled from `storeBytes` (a store snapshot stream) and
   * whose consumers start from their saved state. Refused as nats-server: 10130 when the name is taken.
   * Nothing is left behind when it fails.
   */
  restore(cfg: StreamConfig, created: string, storeBytes: AsyncIterable<Uint8Array>, consumers: readonly StoredConsumerFiles[]): Promise<Stream> {
    return this.serial(async () => {
      this.parts.accountLimits?.checkCreate(cfg);
      if (this.streams.get(cfg.name) !== undefined) throw JsErrors.streamNameExistRestoreFailed();
      if (this.overlapsOthers(cfg)) throw JsErrors.subjectsOverlap();
      this.parts.storage.checkReservation(cfg);
      const dir = streamDir(this.parts.options.storeDir, cfg.name);
      await removeStream(dir);
      const store = await this.openStore(cfg, dir);
      try {
        await store.restore(storeBytes);
        if (cfg.storage === 'file') await saveStream(dir, { config: cfg, created });
        else await mkdir(dir, { recursive: true });
        await writeConsumerFiles(join(dir, 'consumers'), consumers);
      } catch (err) {
        await store.close().catch(() => undefined);
        await removeStream(dir).catch(() => undefined);
        throw err;
      }
      const stream = new Stream(this.parts.streamHost, cfg, created, dir, store, localStreamWriter(this.parts.streamHost));
      await stream.start();
      this.streams.set(stream);
      this.subjectIndex = null;
      await this.parts.consumers.streamAdded(stream);
      sendStreamAdvisory(this.parts.advisories, 'CREATED', cfg.name);
      return stream;
    });
  }

  private updateStream(requested: StreamConfig): Promise<Stream> {
    return this.serial(async () => {
      const stream = this.streams.get(requested.name);
      if (stream === undefined) throw JsErrors.streamNotFound();
      this.parts.accountLimits?.checkMaxBytes(requested);
      const next = checkStreamUpdate(stream.config, requested);
      this.parts.accountLimits?.checkUpdate(next, stream.config.num_replicas);
      if (next.num_replicas > 1) throw JsErrors.replicasNotSupported();
      if (this.overlapsOthers(next)) throw JsErrors.subjectsOverlap();
      if (next.max_bytes > stream.config.max_bytes) this.parts.storage.checkReservation(next);
      if (next.storage === 'file') await saveStream(stream.dir, { config: next, created: stream.created });
      await stream.updateConfig(next);
      this.subjectIndex = null;
      this.parts.consumers.streamUpdated(stream);
      sendStreamAdvisory(this.parts.advisories, 'UPDATED', next.name);
      return stream;
    });
  }

  /** Runs stream create/update/delete one at a time, so checks and changes do not interleave. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    if (this.mutations.pending >= MAX_PENDING_MUTATIONS) return Promise.reject(JsErrors.insufficientResources());
    return this.mutations.run(fn);
  }

  /** Checked against an index of every stream's subjects: the cost follows `cfg`'s subjects, not all pairs. */
  private overlapsOthers(cfg: StreamConfig): boolean {
    if (this.subjectIndex === null) {
      const index = new SubjectIndex();
      for (const s of this.streams.values()) index.add(s.name, s.config.subjects);
      this.subjectIndex = index;
    }
    return this.subjectIndex.overlaps(cfg.subjects, cfg.name);
  }

  private async openStore(cfg: StreamConfig, dir: string): Promise<MessageStore> {
    const limits = storeLimitsOf(cfg);
    if (cfg.storage === 'memory') return new MemoryStore({ limits, messageTtl: messageTtlNs });
    return FileStore.open({ dir: messagesDir(dir), limits, messageTtl: messageTtlNs, sync: this.parts.options.fileSync ?? 'always' });
  }
}

function yieldToIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
