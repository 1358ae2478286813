// nats-server's compression of a monitoring answer (zReq, events.go): a request whose headers carry
// `Accept-Encoding` gets its (successful) answer compressed and named by `Content-Encoding`. nats-server looks for
// "snappy" or "s2" first (answering the Snappy framing format, `snappy`), then "gzip"; any other value is
// answered uncompressed with `Content-Encoding: identity`.
import { gzipSync } from 'node:zlib';
import { decodeHeaders, encodeHeaders, HeaderParseError } from '@flotilla/protocol';
import { snappyFramed, SnappyUnavailableError } from './snappy-frames.js';

export type AcceptedEncoding = 'none' | 'snappy' | 'gzip' | 'identity';

const ACCEPT_ENCODING = 'Accept-Encoding';
const CONTENT_ENCODING = 'Content-Encoding';

/** What the request's header block accepts, as nats-server's getAcceptEncoding reads it (value in any case). */
export function acceptedEncoding(header: Buffer | null): AcceptedEncoding {
  if (header === null) return 'none';
  let value: string | undefined;
  try {
    // nats-server's getHeader matches the key exactly
    value = decodeHeaders(header).entries.find(([k]) => k === ACCEPT_ENCODING)?.[1];
  } catch (err) {
    if (err instanceof HeaderParseError) return 'none';
    throw err;
  }
  if (value === undefined || value === '') return 'none';
  const ae = value.toLowerCase();
  if (ae.includes('snappy') || ae.includes('s2')) return 'snappy';
  return ae.includes('gzip') ? 'gzip' : 'identity';
}

export interface EncodedAnswer {
  /** the header block, null for none */
  header: Buffer | null;
  body: Buffer;
}

export function encodeAnswer(json: string, encoding: AcceptedEncoding): EncodedAnswer {
  const body = Buffer.from(json);
  if (encoding === 'none') return { header: null, body };
  if (encoding === 'snappy') {
    try {
      return { header: contentEncoding('snappy'), body: snappyFramed(body) };
    } catch (err) {
      // no binding on this platform: what nats-server answers for an encoding it does not write
      if (!(err instanceof SnappyUnavailableError)) throw err;
      return { header: contentEncoding('identity'), body };
    }
  }
  return { header: contentEncoding(encoding), body: encoding === 'gzip' ? gzipSync(body) : body };
}

function contentEncoding(value: string): Buffer {
  return encodeHeaders({ entries: [[CONTENT_ENCODING, value]] });
}
