// The body of `$JS.API.DIRECT.GET.<S>` decoded as nats-server 2.14's JSApiMsgGetRequest, with its checks in
// its order (processDirectGetRequest); every failure is the status reply nats-server sends.
import { encodeStatusHeaders } from '@flotilla/protocol';
import { parseTimeNs } from './time-format.js';

export const EMPTY_REQUEST = encodeStatusHeaders(408, 'Empty Request');
export const MALFORMED = encodeStatusHeaders(408, 'Malformed Request');
export const BAD_REQUEST = encodeStatusHeaders(408, 'Bad Request');

export interface DirectGetRequest {
  seq: number;
  lastBySubject: string;
  nextBySubject: string;
  /** 0: a single message; otherwise a batch ending in the EOB status (negative: the EOB alone, as nats-server). */
  batch: number;
  /** 0: nats-server's default (its max_pending). */
  maxBytes: number;
  startTimeNs: bigint | null;
  multiLast: string[];
  upToSeq: number;
  upToTimeNs: bigint | null;
  noHeaders: boolean;
}

/** Go's json.Unmarshal into the struct: null leaves a field unset, a wrong type fails the whole decode. */
function decode(o: Record<string, unknown>): DirectGetRequest | null {
  const uint = (k: string): number | null => {
    const v = o[k] ?? 0;
    return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null;
  };
  const int = (k: string): number | null => {
    const v = o[k] ?? 0;
    return typeof v === 'number' && Number.isSafeInteger(v) ? v : null;
  };
  const str = (k: string): string | null => {
    const v = o[k] ?? '';
    return typeof v === 'string' ? v : null;
  };
  const time = (k: string): bigint | null | undefined => {
    const v = o[k] ?? null;
    if (v === null) return null;
    return typeof v === 'string' ? (parseTimeNs(v) ?? undefined) : undefined;
  };
  const seq = uint('seq');
  const lastBySubject = str('last_by_subj');
  const nextBySubject = str('next_by_subj');
  const batch = int('batch');
  const maxBytes = int('max_bytes');
  const upToSeq = uint('up_to_seq');
  const startTimeNs = time('start_time');
  const upToTimeNs = time('up_to_time');
  const multiRaw = o['multi_last'] ?? [];
  const noHdr = o['no_hdr'] ?? false;
  if (seq === null || lastBySubject === null || nextBySubject === null || batch === null || maxBytes === null) return null;
  if (upToSeq === null || startTimeNs === undefined || upToTimeNs === undefined || typeof noHdr !== 'boolean') return null;
  if (!Array.isArray(multiRaw) || !multiRaw.every((s): s is string => typeof s === 'string')) return null;
  return { seq, lastBySubject, nextBySubject, batch, maxBytes, startTimeNs, multiLast: multiRaw, upToSeq, upToTimeNs, noHeaders: noHdr };
}

function decodeBody(data: Buffer): DirectGetRequest | Buffer {
  let body: unknown;
  try {
    body = JSON.parse(data.toString('utf8'));
  } catch {
    return MALFORMED;
  }
  // Go decodes `null` into the request struct as nothing set; any other non-object does not decode.
  if (body === null) body = {};
  if (typeof body !== 'object' || Array.isArray(body)) return MALFORMED;
  return decode(body as Record<string, unknown>) ?? MALFORMED;
}

/** `$JS.API.DIRECT.GET.<S>` with a JSON body. */
export function parseDirectGetRequest(data: Buffer): DirectGetRequest | Buffer {
  if (data.length === 0) return EMPTY_REQUEST;
  const r = decodeBody(data);
  if (Buffer.isBuffer(r)) return r;
  const last = r.lastBySubject !== '';
  const next = r.nextBySubject !== '';
  const multi = r.multiLast.length > 0;
  const start = r.startTimeNs !== null;
  if (r.seq === 0 && !last && !next && !multi && !start) return EMPTY_REQUEST;
  // Conflicting options; no batch for last_by_subj.
  if (
    (r.seq > 0 && (last || start)) ||
    (start && last) ||
    (last && (next || r.batch > 0 || multi)) ||
    (next && multi) ||
    (r.upToSeq > 0 && r.upToTimeNs !== null)
  ) {
    return BAD_REQUEST;
  }
  return r;
}

/**
 * `$JS.API.DIRECT.GET.<S>.<subject…>` (processDirectGetLastBySubjectRequest): the body may be empty; only
 * max_bytes and no_hdr make sense with it, any other field set is a Bad Request.
 */
export function parseLastBySubjectRequest(subject: string, data: Buffer): DirectGetRequest | Buffer {
  let r: DirectGetRequest | Buffer;
  if (data.length === 0) {
    r = { seq: 0, lastBySubject: '', nextBySubject: '', batch: 0, maxBytes: 0, startTimeNs: null, multiLast: [], upToSeq: 0, upToTimeNs: null, noHeaders: false };
  } else {
    r = decodeBody(data);
    if (Buffer.isBuffer(r)) return r;
  }
  if (
    subject === '' ||
    r.lastBySubject !== '' || r.nextBySubject !== '' || r.multiLast.length > 0 || r.seq !== 0 || r.batch !== 0 ||
    r.startTimeNs !== null || r.upToSeq !== 0 || r.upToTimeNs !== null
  ) {
    return BAD_REQUEST;
  }
  r.lastBySubject = subject;
  return r;
}
