// Subject delete markers (ADR-43, subject_delete_marker_ttl): on such a stream the store does not remove the
// messages that pass max_age or their TTL itself; it reports them here (limits.expiryReports), and the stream's
// writer removes them the way every replica sees: a message that is its subject's last is replaced by a marker
// (an empty message with `Nats-Marker-Reason: MaxAge`, `Nats-TTL: <marker TTL>` and `Nats-Rollup: sub`,
// whose roll-up removes it), any other one, or an expired marker, is deleted. Only the node that takes the
// stream's publishes (the leader of a replicated stream) acts; the others' stores report again after a while,
// so a new leader picks up what the old one left. As nats-server 2.14.5 (memstore/filestore expireMsgs and
// handleRemovalOrSdm): the MaxAge reason is also the one a TTL expiry writes; 2.14.5 writes no Purge or
// Remove markers (those reasons exist as constants only).
import type { ExpiredMessage, MessageStore } from '@flotilla/store';
import { goDuration } from '../consumer/consumer-errors.js';
import type { StreamConfig } from './stream-config-types.js';
import type { StreamWriter } from './stream-writer.js';

export const MARKER_REASON_HEADER = 'Nats-Marker-Reason';
export type MarkerReason = 'MaxAge' | 'Purge' | 'Remove';

const EMPTY = Buffer.alloc(0);
const MARKER_REASON_KEY = Buffer.from(`\r\n${MARKER_REASON_HEADER}:`);
/** Reported messages handled at once at most; the rest are reported again by the store. */
const MAX_PENDING_REPORTS = 10_000;

/** The header block of a marker, byte for byte as nats-server's handleRemovalOrSdm writes it. */
export function markerHeader(reason: MarkerReason, markerTtlNs: number): Buffer {
  const ttl = goDuration(Math.floor(markerTtlNs / 1e9) * 1e9);
  return Buffer.from(`NATS/1.0\r\n${MARKER_REASON_HEADER}: ${reason}\r\nNats-TTL: ${ttl}\r\nNats-Rollup: sub\r\n\r\n`);
}

/** nats-server's isSubjectDeleteMarker: the header names a marker reason. */
export function isDeleteMarker(header: Uint8Array): boolean {
  return header.length > 0 && Buffer.from(header.buffer, header.byteOffset, header.byteLength).indexOf(MARKER_REASON_KEY) >= 0;
}

/** What the marker writer needs of its stream. */
export interface MarkerStream {
  readonly config: Readonly<StreamConfig>;
  readonly store: MessageStore;
  /** True where the stream takes publishes (single node, or a replicated stream's leader). */
  readonly isServing: boolean;
  readonly isStopped: boolean;
}

export class DeleteMarkers {
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;

  constructor(
    private readonly stream: MarkerStream,
    private readonly writer: () => StreamWriter,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** The store's report: handled in order, one message after the other (a marker's header is read first). */
  readonly expired = (due: readonly ExpiredMessage[]): void => {
    if (!this.stream.isServing || this.stream.isStopped) return;
    for (const m of due) {
      if (this.pending >= MAX_PENDING_REPORTS) return;
      this.pending++;
      this.chain = this.chain
        .then(() => this.handle(m))
        .catch(this.onError)
        .finally(() => {
          this.pending--;
        });
    }
  };

  private async handle(m: ExpiredMessage): Promise<void> {
    const stream = this.stream;
    if (!stream.isServing || stream.isStopped) return;
    const markerTtlNs = stream.config.subject_delete_marker_ttl ?? 0;
    if (m.lastOfSubject && markerTtlNs > 0) {
      const msg = await stream.store.get(m.seq);
      if (msg === null) return;
      if (!isDeleteMarker(msg.header)) {
        this.writer().publish(m.subject, markerHeader('MaxAge', markerTtlNs), EMPTY, null);
        return;
      }
    }
    await this.writer().removeMessage(m.seq);
  }
}
