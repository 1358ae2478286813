// StreamInfo and stored-message JSON as nats-server writes them (reference §5, §6).
import type { StoredMessage } from '@flotilla/store';
import type { Stream } from '../stream/stream.js';
import { formatTimeNs } from './time-format.js';
import { dynamicMetadata } from './api-level.js';

/** Subjects per page of STREAM.INFO with subjects_filter. */
export const SUBJECTS_PAGE_LIMIT = 100_000;

export interface StateOptions {
  subjectsFilter?: string;
  deletedDetails?: boolean;
  consumerCount: number;
  /** The subjects page of a subjects_filter request (absent when nothing matched). */
  subjects?: Record<string, number>;
}

export interface StreamStateJson {
  messages: number;
  bytes: number;
  first_seq: number;
  first_ts: string;
  last_seq: number;
  last_ts: string;
  num_subjects?: number;
  subjects?: Record<string, number>;
  num_deleted?: number;
  deleted?: number[];
  consumer_count: number;
}

/** A stream's `state` block (StreamInfo, /jsz stream details). */
export function streamState(stream: Pick<Stream, 'store'>, opts: StateOptions): StreamStateJson {
  const st = stream.store.state({ deleted: opts.deletedDetails === true });
  const out: StreamStateJson = {
    messages: st.messages,
    bytes: st.bytes,
    first_seq: st.first_seq,
    first_ts: formatTimeNs(st.first_ts),
    last_seq: st.last_seq,
    last_ts: formatTimeNs(st.last_ts),
    consumer_count: opts.consumerCount,
  };
  if (st.num_subjects > 0) out.num_subjects = st.num_subjects;
  if (opts.subjects !== undefined) out.subjects = opts.subjects;
  if (st.num_deleted > 0) out.num_deleted = st.num_deleted;
  if (opts.deletedDetails && st.deleted !== undefined && st.deleted.length > 0) out.deleted = st.deleted;
  // nats-server's field order: consumer_count comes last.
  const cc = out.consumer_count;
  delete (out as Partial<StreamStateJson>).consumer_count;
  out.consumer_count = cc;
  return out;
}

/** Subject counts for subjects_filter, sorted, one page. */
export function subjectsPage(
  stream: Stream,
  filter: string,
  offset: number,
): { total: number; subjects: Record<string, number> } {
  const counts = stream.store.subjectCounts(filter === '>' ? undefined : filter);
  const names = [...counts.keys()].sort();
  const subjects: Record<string, number> = {};
  for (const name of names.slice(offset, offset + SUBJECTS_PAGE_LIMIT)) subjects[name] = counts.get(name)!;
  return { total: names.length, subjects };
}

export interface StreamInfoJson {
  config: object;
  created: string;
  state: StreamStateJson;
  domain?: string;
}

/** The config as nats-server writes it: `subjects` is omitempty (a mirror or a sourcing stream may have none). */
export function configJson(cfg: Stream['config']): object {
  // setDynamicStreamMetadata: every config an answer carries shows this server's version and API level.
  const shown = { ...cfg, metadata: dynamicMetadata(cfg.metadata) };
  if (cfg.subjects.length > 0) return shown;
  const { subjects: _none, ...rest } = shown;
  return rest;
}

export function streamInfo(stream: Stream, state: StreamStateJson, domain: string | undefined): StreamInfoJson {
  const info: StreamInfoJson = { config: configJson(stream.config), created: stream.created, state };
  if (domain) info.domain = domain;
  return info;
}

function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** STREAM.MSG.GET `message`: hdrs/data standard base64, each omitted when empty. */
export function storedMessageJson(m: StoredMessage): object {
  return {
    subject: m.subject,
    seq: m.seq,
    ...(m.header.length > 0 ? { hdrs: b64(m.header) } : {}),
    ...(m.data.length > 0 ? { data: b64(m.data) } : {}),
    time: formatTimeNs(m.timestampNs),
  };
}
