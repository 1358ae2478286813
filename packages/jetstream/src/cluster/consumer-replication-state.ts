// The apply side of consumer replication, one per stream replica on EVERY node: the consumers' config and
// state as the stream's Raft log has them. Kept in memory (what a new leader starts its consumers from) and,
// for file streams, written to `<stream.dir>/consumers/<name>/` in FileConsumerStorage's format (coalesced,
// fsynced), so a restarted node finds them exactly as after a single-node restart. Memory streams and
// mem_storage consumers live only in memory on each replica.
import { join } from 'node:path';
import type { ConsumerStateSnapshot } from '../consumer/consumer-state.js';
import { FileConsumerStorage, storedConsumers, type ConsumerMeta } from '../consumer/consumer-storage.js';
import { decodeConsumerEntry, type ConsumerReplicationEntry } from './consumer-replication-entry.js';

export interface AppliedConsumer {
  meta: ConsumerMeta;
  /** null until the leader replicated the consumer's first state */
  state: ConsumerStateSnapshot | null;
}

/** Snapshot format version, so a later format can be told apart. */
const SNAPSHOT_VERSION = 1;

export class AppliedConsumers {
  private readonly byName = new Map<string, AppliedConsumer>();
  private readonly files = new Map<string, FileConsumerStorage>();
  /** File operations per consumer run in entry order (a re-create must not race the removal before it). */
  private readonly fileChains = new Map<string, Promise<void>>();
  private touchedWhileLoading: Set<string> | null = null;

  /** `consumersDir` null: nothing is written (memory stream). */
  constructor(
    private readonly consumersDir: string | null,
    private readonly onError: (err: unknown) => void,
  ) {}

  /**
   * Loads what a previous run of this node wrote (file streams). Entries the log applied meanwhile are
   * newer than the files and win.
   */
  async load(): Promise<void> {
    if (this.consumersDir === null) return;
    this.touchedWhileLoading = new Set();
    try {
      for await (const files of storedConsumers(this.consumersDir)) {
        if (this.touchedWhileLoading.has(files.meta.name)) continue;
        this.byName.set(files.meta.name, { meta: files.meta, state: files.state });
      }
    } finally {
      this.touchedWhileLoading = null;
    }
  }

  get size(): number {
    return this.byName.size;
  }

  get(name: string): AppliedConsumer | undefined {
    return this.byName.get(name);
  }

  all(): AppliedConsumer[] {
    return [...this.byName.values()];
  }

  /** Applies one consumer entry from the log; returns false for a payload that is not one. */
  applyPayload(payload: Uint8Array): boolean {
    const entry = decodeConsumerEntry(payload);
    if (entry === null) return false;
    this.apply(entry);
    return true;
  }

  apply(entry: ConsumerReplicationEntry): void {
    if (entry.op === 'sync') {
      this.replaceAll(entry.consumers);
      return;
    }
    this.touchedWhileLoading?.add(entry.op === 'meta' ? entry.meta.name : entry.name);
    switch (entry.op) {
      case 'meta': {
        const name = entry.meta.name;
        const prev = this.byName.get(name);
        this.byName.set(name, { meta: entry.meta, state: prev?.state ?? null });
        this.onFiles(name, async (files) => {
          await files.saveMeta(entry.meta);
          if (prev?.state) files.stateChanged();
        });
        return;
      }
      case 'state': {
        const c = this.byName.get(entry.name);
        // A state for a consumer already removed (or never created here) is stale.
        if (!c) return;
        c.state = entry.state;
        this.onFiles(entry.name, (files) => {
          files.stateChanged();
          return Promise.resolve();
        });
        return;
      }
      case 'remove': {
        if (!this.byName.delete(entry.name)) return;
        this.removeFiles(entry.name);
        return;
      }
    }
  }

  /** Everything, for the stream group's snapshot (a lagging replica installs it with restore()). */
  snapshot(): Buffer {
    return Buffer.from(JSON.stringify({ v: SNAPSHOT_VERSION, consumers: this.all() }), 'utf8');
  }

  /** Replaces everything with a snapshot's content (files follow). */
  restore(data: Uint8Array): void {
    const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as { v: number; consumers: AppliedConsumer[] };
    if (parsed.v !== SNAPSHOT_VERSION || !Array.isArray(parsed.consumers)) throw new Error(`unknown consumer snapshot version ${parsed.v}`);
    this.replaceAll(parsed.consumers);
  }

  private replaceAll(consumers: readonly AppliedConsumer[]): void {
    const keep = new Set(consumers.map((c) => c.meta.name));
    for (const name of [...this.byName.keys()]) {
      if (!keep.has(name)) this.apply({ op: 'remove', name });
    }
    for (const c of consumers) {
      this.apply({ op: 'meta', meta: c.meta });
      if (c.state) this.apply({ op: 'state', name: c.meta.name, state: c.state });
    }
  }

  /** Resolves once every file write so far is done (tests, shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.fileChains.values()]);
    await Promise.all([...this.files.values()].map((f) => f.flush()));
  }

  /** Final writes; nothing is written after. */
  async close(): Promise<void> {
    await Promise.all([...this.fileChains.values()]);
    await Promise.all([...this.files.values()].map((f) => f.close()));
    this.files.clear();
  }

  /** The stream is deleted: forget everything (its directory goes with the stream). */
  async drop(): Promise<void> {
    for (const name of [...this.byName.keys()]) this.apply({ op: 'remove', name });
    await this.flush();
  }

  private persisted(name: string): boolean {
    const c = this.byName.get(name);
    return this.consumersDir !== null && c !== undefined && !c.meta.config.mem_storage;
  }

  private onFiles(name: string, op: (files: FileConsumerStorage) => Promise<void>): void {
    if (!this.persisted(name)) return;
    this.chain(name, async () => {
      let files = this.files.get(name);
      if (!files) {
        files = new FileConsumerStorage(join(this.consumersDir!, name), () => this.stateOf(name), this.onError);
        this.files.set(name, files);
      }
      await op(files);
    });
  }

  private removeFiles(name: string): void {
    if (this.consumersDir === null) return;
    const dir = join(this.consumersDir, name);
    this.chain(name, async () => {
      const files = this.files.get(name);
      this.files.delete(name);
      if (files) await files.remove();
      else await new FileConsumerStorage(dir, () => EMPTY_STATE, this.onError).remove();
    });
  }

  private stateOf(name: string): ConsumerStateSnapshot {
    return this.byName.get(name)?.state ?? EMPTY_STATE;
  }

  private chain(name: string, op: () => Promise<void>): void {
    const prev = this.fileChains.get(name) ?? Promise.resolve();
    const next = prev.then(op).catch((err: unknown) => this.onError(err));
    this.fileChains.set(name, next);
    void next.finally(() => {
      if (this.fileChains.get(name) === next) this.fileChains.delete(name);
    });
  }
}

const EMPTY_STATE: ConsumerStateSnapshot = {
  delivered: { consumer_seq: 0, stream_seq: 0 },
  ack_floor: { consumer_seq: 0, stream_seq: 0 },
  pending: [],
  redelivered: [],
};
