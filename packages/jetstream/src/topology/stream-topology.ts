// A stream's mirror or sources while this node runs the stream (single node: always; replicated: its leader):
// one OriginFeed per origin. A mirror's position is its own last sequence (it stores the origin's
// sequences); a source's is the origin sequence in the Nats-Stream-Source header of the last message it
// brought, read back from the store when leadership begins (startingSequenceForSources) and kept up to date
// as messages settle. Both are in what the stream stores — and so, replicated, in its Raft log — so a new
// leader goes on after the last committed message: nothing lost, nothing stored twice.
import type { MessageStore } from '@flotilla/store';
import type { JetStreamLogger, MessageBus } from '../message-bus.js';
import type { StreamConfig, StreamSourceConfig } from '../stream/stream-config-types.js';
import type { IngestResult, SourcedMessage } from '../stream/stream-writer.js';
import { OriginFeed, type FeedInfo, type OriginMsg } from './origin-feed.js';
import { sourceIndexName } from './source-config.js';
import { apiPrefixHash, parseSourceHeader, readSourceHeader, sourceHeaderValue, sourcedHeader } from './source-header.js';

/** What the topology needs of its stream. */
export interface SourcingStream {
  readonly name: string;
  readonly config: Readonly<StreamConfig>;
  readonly store: MessageStore;
  lastSeq(): number;
  ingest(m: SourcedMessage): Promise<IngestResult>;
}

/** Messages read back per step when looking for the sources' positions. */
const SCAN_STEP = 1024;

interface SourceFeed {
  iname: string;
  feed: OriginFeed;
  /** Last origin sequence settled here (stored or a duplicate). */
  position: number;
  /** The ingests waiting for one store flush (one promise), and the last origin sequence among them. */
  batch: { of: Promise<IngestResult>; lastSeq: number; settled: Promise<IngestResult> } | null;
}

export class StreamTopology {
  private mirror: OriginFeed | null = null;
  private sources = new Map<string, SourceFeed>();
  private active = false;
  /** Bumped on each activation: a scan of an older leadership must not start feeds. */
  private epoch = 0;

  constructor(
    private readonly stream: SourcingStream,
    private readonly bus: MessageBus,
    private readonly log: JetStreamLogger,
  ) {
    this.build(stream.config);
  }

  /** Serving (leading) or not. */
  setActive(active: boolean): void {
    if (active === this.active) return;
    this.active = active;
    this.epoch++;
    if (!active) return this.stopFeeds();
    void this.activate(this.epoch);
  }

  stop(): void {
    this.setActive(false);
  }

  /** A stream update: feeds of removed sources stop, added ones start (a removed mirror promotes the stream). */
  configChanged(next: StreamConfig): void {
    const wasActive = this.active;
    const before = new Map([...this.sources].map(([k, v]) => [k, v.position]));
    const mirrorBefore = this.mirror;
    if (wasActive) this.setActive(false);
    this.build(next);
    // A kept mirror or source goes on from where it was.
    for (const [k, v] of this.sources) v.position = before.get(k) ?? 0;
    void mirrorBefore;
    if (wasActive) this.setActive(true);
  }

  get hasFeeds(): boolean {
    return this.mirror !== null || this.sources.size > 0;
  }

  mirrorInfo(): FeedInfo | undefined {
    return this.mirror?.info();
  }

  sourcesInfo(): FeedInfo[] | undefined {
    if (this.sources.size === 0) return undefined;
    return [...this.sources.values()].map((s) => s.feed.info());
  }

  // ---- internals --------------------------------------------------------------------------------

  private build(cfg: Readonly<StreamConfig>): void {
    this.stopFeeds();
    this.mirror = null;
    this.sources = new Map();
    if (cfg.mirror !== undefined) {
      this.mirror = new OriginFeed('mirror', cfg.mirror, this.bus, this.log, {
        ingest: (m) => this.ingestMirrored(m),
        position: () => this.stream.lastSeq(),
      }, this.stream.name);
    }
    for (const s of cfg.sources ?? []) this.addSource(s);
  }

  private addSource(cfg: StreamSourceConfig): void {
    const iname = sourceIndexName(cfg, apiPrefixHash);
    const entry: SourceFeed = {
      iname,
      position: 0,
      batch: null,
      feed: null as unknown as OriginFeed,
    };
    entry.feed = new OriginFeed('source', cfg, this.bus, this.log, {
      ingest: (m) => this.ingestSourced(entry, m),
      position: () => entry.position,
    }, this.stream.name);
    this.sources.set(iname, entry);
  }

  private ingestMirrored(m: OriginMsg): Promise<IngestResult> {
    return this.stream.ingest({ subject: m.subject, header: sourcedHeader(m.header, undefined), data: m.data, seq: m.originSeq, timestampNs: m.timestampNs });
  }

  private ingestSourced(entry: SourceFeed, m: OriginMsg): Promise<IngestResult> {
    const header = sourcedHeader(m.header, sourceHeaderValue(entry.iname, m.originSeq, m.originSubject));
    const stored = this.stream.ingest({ subject: m.subject, header, data: m.data });
    // Messages settled by one store flush share its promise: the position moves once, to the batch's last.
    const batch = entry.batch;
    if (batch !== null && batch.of === stored) {
      batch.lastSeq = m.originSeq;
      return batch.settled;
    }
    const next = { of: stored, lastSeq: m.originSeq, settled: null as unknown as Promise<IngestResult> };
    next.settled = stored.then((r) => {
      if (next.lastSeq > entry.position) entry.position = next.lastSeq;
      return r;
    });
    entry.batch = next;
    return next.settled;
  }

  private async activate(epoch: number): Promise<void> {
    if (this.sources.size > 0) {
      try {
        await this.scanPositions(epoch);
      } catch (err) {
        this.log.error({ stream: this.stream.name, err: String(err) }, 'reading the sources positions failed');
      }
    }
    if (epoch !== this.epoch || !this.active) return;
    this.mirror?.start();
    for (const s of this.sources.values()) s.feed.start();
  }

  /** Newest first, until every source's last message is found (or the stream's start). */
  private async scanPositions(epoch: number): Promise<void> {
    const missing = new Map(this.sources);
    const st = this.stream.store.state();
    let end = st.last_seq;
    while (missing.size > 0 && end >= st.first_seq && end > 0) {
      const start = Math.max(st.first_seq, end - SCAN_STEP + 1);
      const msgs = await this.stream.store.readRange(start, end - start + 1);
      if (epoch !== this.epoch) return;
      for (let i = msgs.length - 1; i >= 0 && missing.size > 0; i--) {
        const h = msgs[i]!.header;
        if (h.length === 0) continue;
        const v = readSourceHeader(h);
        const parsed = v === undefined ? null : parseSourceHeader(v);
        if (parsed === null) continue;
        const entry = missing.get(parsed.iname);
        if (entry === undefined) continue;
        entry.position = parsed.originSeq;
        missing.delete(parsed.iname);
      }
      end = start - 1;
    }
  }

  private stopFeeds(): void {
    this.mirror?.stop();
    for (const s of this.sources.values()) s.feed.stop();
  }
}
