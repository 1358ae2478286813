// A stream's `republish { src, dest, headers_only }`: once a message is stored for good (durable on one
// node, committed in a cluster) the node serving the stream — the leader — publishes a copy on the
// transformed subject with nats-server's headers (Nats-Stream, Nats-Subject, Nats-Sequence, Nats-Time-Stamp,
// Nats-Last-Sequence, and for headers only Nats-Msg-Size with no payload). Config checks are checkStreamCfg's.
import { isValidPublishSubject, subjectsCollide, SubjectTransform } from '@flotilla/protocol';
import type { StoredMessage } from '@flotilla/store';
import { JsErrors } from '../api/api-errors.js';
import { formatTimeNs } from '../api/time-format.js';
import type { MessageBus } from '../message-bus.js';
import type { StreamConfig } from './stream-config-types.js';

type Json = Record<string, unknown>;
export type RepublishConfig = NonNullable<StreamConfig['republish']>;

const FIELDS: ReadonlySet<string> = new Set(['src', 'dest', 'headers_only']);

/** The decoded `republish` field (Go's RePublish), or undefined when absent. */
export function parseRepublishField(o: Json): RepublishConfig | undefined {
  const v = o['republish'];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw JsErrors.invalidJson();
  const r = v as Json;
  for (const key in r) if (!FIELDS.has(key)) throw JsErrors.unknownJsonField(key);
  const s = (key: string): string => {
    const x = r[key];
    if (x === undefined || x === null) return '';
    if (typeof x !== 'string') throw JsErrors.invalidJson();
    return x;
  };
  const ho = r['headers_only'];
  if (ho !== undefined && ho !== null && typeof ho !== 'boolean') throw JsErrors.invalidJson();
  return { src: s('src'), dest: s('dest'), ...(ho === true ? { headers_only: true } : {}) };
}

/**
 * checkStreamCfg's republish rules; returns the config as stored (an empty `src` is `>`; `>` → `>` on a stream
 * whose one subject is its transform's source republishes the transformed subjects).
 */
export function checkRepublish(r: RepublishConfig | undefined, subjects: readonly string[], transform: StreamConfig['subject_transform']): RepublishConfig | undefined {
  if (r === undefined) return undefined;
  let src = r.src === '' ? '>' : r.src;
  let dest = r.dest;
  if (dest === '>' && src === '>' && transform !== undefined && subjects.length === 1 && transform.src === subjects[0]) {
    src = transform.dest;
    dest = transform.dest;
  }
  if (subjects.some((s) => subjectsCollide(dest, s))) throw JsErrors.streamInvalidConfig('stream configuration for republish destination forms a cycle');
  try {
    SubjectTransform.compile(src, dest);
  } catch {
    throw JsErrors.streamInvalidConfig(`stream configuration for republish with transform from '${src}' to '${dest}' not valid`);
  }
  return { src, dest, ...(r.headers_only === true ? { headers_only: true } : {}) };
}

/** Republishes a stream's stored messages; `lastSeq` is the subject's previous sequence (0: none). */
export class Republisher {
  private readonly transform: SubjectTransform | null;
  private readonly headersOnly: boolean;

  constructor(
    private readonly stream: string,
    cfg: RepublishConfig,
    private readonly bus: MessageBus,
  ) {
    this.transform = SubjectTransform.compile(cfg.src, cfg.dest);
    this.headersOnly = cfg.headers_only === true;
  }

  republish(m: StoredMessage, lastSeq: number): void {
    const to = this.transform === null ? m.subject : this.transform.match(m.subject);
    // nats-server suppresses a republish whose subject is not publishable.
    if (to === null || !isValidPublishSubject(to)) return;
    let extra = `Nats-Stream: ${this.stream}\r\nNats-Subject: ${m.subject}\r\nNats-Sequence: ${m.seq}\r\nNats-Time-Stamp: ${formatTimeNs(m.timestampNs)}\r\nNats-Last-Sequence: ${lastSeq}\r\n`;
    if (this.headersOnly) extra += `Nats-Msg-Size: ${m.data.length}\r\n`;
    extra += '\r\n';
    const header =
      m.header.length >= 4
        ? Buffer.concat([Buffer.from(m.header.buffer, m.header.byteOffset, m.header.byteLength - 2), Buffer.from(extra)])
        : Buffer.from(`NATS/1.0\r\n${extra}`);
    this.bus.publish(to, null, header, this.headersOnly ? Buffer.alloc(0) : m.data);
  }
}
