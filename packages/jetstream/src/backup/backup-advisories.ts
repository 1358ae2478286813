// `$JS.EVENT.ADVISORY.STREAM.{SNAPSHOT,RESTORE}_{CREATE,COMPLETE}.<stream>`, payloads as nats-server 2.14's
// jetstream_events.go. `client` is null: the bus does not carry the requester's ClientInfo here.
import { randomBytes } from 'node:crypto';
import type { AdvisorySink } from '../catalogue/stream-advisory.js';

const A = 'io.nats.jetstream.advisory.v1.';

function base(sink: AdvisorySink, type: string, stream: string): Record<string, unknown> {
  return { type: `${A}${type}`, id: randomBytes(11).toString('hex'), timestamp: new Date().toISOString(), stream };
}

function withDomain(sink: AdvisorySink, body: Record<string, unknown>): Record<string, unknown> {
  return sink.domain ? { ...body, domain: sink.domain } : body;
}

export function snapshotCreated(sink: AdvisorySink, stream: string, state: object): void {
  sink.advisory(`$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_CREATE.${stream}`, withDomain(sink, { ...base(sink, 'snapshot_create', stream), state, client: null }));
}

export function snapshotCompleted(sink: AdvisorySink, stream: string, start: Date, end: Date): void {
  sink.advisory(
    `$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_COMPLETE.${stream}`,
    withDomain(sink, { ...base(sink, 'snapshot_complete', stream), start: start.toISOString(), end: end.toISOString(), client: null }),
  );
}

export function restoreCreated(sink: AdvisorySink, stream: string): void {
  sink.advisory(`$JS.EVENT.ADVISORY.STREAM.RESTORE_CREATE.${stream}`, withDomain(sink, { ...base(sink, 'restore_create', stream), client: null }));
}

export function restoreCompleted(sink: AdvisorySink, stream: string, start: Date, end: Date, bytes: number): void {
  sink.advisory(
    `$JS.EVENT.ADVISORY.STREAM.RESTORE_COMPLETE.${stream}`,
    withDomain(sink, { ...base(sink, 'restore_complete', stream), start: start.toISOString(), end: end.toISOString(), bytes, client: null }),
  );
}
