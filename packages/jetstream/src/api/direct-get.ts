// `$JS.API.DIRECT.GET.<S>[.<subject…>]`: the stored message itself, with the stream's headers
// appended to its own (reference §6). Status replies instead of JSON errors.
import { encodeStatusHeaders } from '@flotilla/protocol';
import type { StoredMessage } from '@flotilla/store';
import type { BusMessage, MessageBus } from '../message-bus.js';
import type { Stream } from '../stream/stream.js';
import { formatTimeNs } from './time-format.js';

const EMPTY = Buffer.alloc(0);
const NOT_FOUND = encodeStatusHeaders(404, 'Message Not Found');
const EMPTY_REQUEST = encodeStatusHeaders(408, 'Empty Request');
const MALFORMED = encodeStatusHeaders(408, 'Malformed Request');
const BAD_REQUEST = encodeStatusHeaders(408, 'Bad Request');

type Lookup = { seq: number } | { lastBySubject: string } | { nextBySubject: string; seq: number };

/** nats-server's processDirectGetRequest: its checks in its order, each failure a 408 with its reason. */
function parseLookup(data: Buffer): Lookup | Buffer {
  if (data.length === 0) return EMPTY_REQUEST;
  let body: unknown;
  try {
    body = JSON.parse(data.toString('utf8'));
  } catch {
    return MALFORMED;
  }
  // Go decodes `null` into the request struct as nothing set; any other non-object does not decode.
  if (body === null) return EMPTY_REQUEST;
  if (typeof body !== 'object' || Array.isArray(body)) return MALFORMED;
  const o = body as Record<string, unknown>;
  const seq = o['seq'] ?? 0;
  const last = o['last_by_subj'] ?? '';
  const next = o['next_by_subj'] ?? '';
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return MALFORMED;
  if (typeof last !== 'string' || typeof next !== 'string') return MALFORMED;
  if (seq === 0 && last === '' && next === '') return EMPTY_REQUEST;
  if (last !== '' && (seq > 0 || next !== '')) return BAD_REQUEST;
  if (last !== '') return { lastBySubject: last };
  if (next !== '') return { nextBySubject: next, seq };
  return { seq };
}

function withStreamHeaders(stream: Stream, m: StoredMessage): Buffer {
  const extra =
    `Nats-Stream: ${stream.name}\r\nNats-Subject: ${m.subject}\r\nNats-Sequence: ${m.seq}\r\n` +
    `Nats-Time-Stamp: ${formatTimeNs(m.timestampNs)}\r\n\r\n`;
  if (m.header.length >= 4) {
    // The stored block ends with the blank line: insert ours before it.
    const own = Buffer.from(m.header.buffer, m.header.byteOffset, m.header.byteLength - 2);
    return Buffer.concat([own, Buffer.from(extra)]);
  }
  return Buffer.from(`NATS/1.0\r\n${extra}`);
}

/** Answers a direct get on `stream` (tokens after `$JS.API`: DIRECT, GET, S, subject…). */
export async function directGet(bus: MessageBus, stream: Stream, tokens: readonly string[], msg: BusMessage): Promise<void> {
  const reply = msg.reply;
  if (reply === null) return;
  let found: StoredMessage | null;
  if (tokens.length > 3) {
    found = await stream.store.lastBySubject(tokens.slice(3).join('.'));
  } else {
    const lookup = parseLookup(msg.data);
    if (Buffer.isBuffer(lookup)) return bus.publish(reply, null, lookup, EMPTY);
    if ('lastBySubject' in lookup) found = await stream.store.lastBySubject(lookup.lastBySubject);
    else if ('nextBySubject' in lookup) found = await stream.store.nextMatching(lookup.nextBySubject, lookup.seq);
    else found = await stream.store.get(lookup.seq);
  }
  if (found === null) return bus.publish(reply, null, NOT_FOUND, EMPTY);
  bus.publish(reply, null, withStreamHeaders(stream, found), found.data);
}
