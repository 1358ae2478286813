// The client events the system account publishes (nats-server's ConnectEventMsg, DisconnectEventMsg and
// the auth error event, which has the disconnect shape): a typed event header, the sending server, the
// client's ClientInfo and, once it is gone, its traffic and why it went.
import { randomBytes } from 'node:crypto';
import type { ClientConnection } from '../client-connection.js';

export const CONNECT_EVENT_TYPE = 'io.nats.server.advisory.v1.client_connect';
export const DISCONNECT_EVENT_TYPE = 'io.nats.server.advisory.v1.client_disconnect';

const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A 22-character event id, shaped like the nuid nats-server uses. */
export function newEventId(): string {
  const bytes = randomBytes(22);
  let id = '';
  for (const b of bytes) id += ID_ALPHABET[b % ID_ALPHABET.length];
  return id;
}

/** nats-server's ClientInfo for a client connection; `stopMs` once it has closed. */
export function clientInfo(c: ClientConnection, stopMs?: number): Record<string, unknown> {
  return {
    start: new Date(c.startMs).toISOString(),
    host: c.remoteIp.replace(/^::ffff:/, ''),
    id: c.cid,
    acc: c.account,
    ...(c.user ? { user: c.user } : {}),
    ...(c.name ? { name: c.name } : {}),
    ...(c.lang ? { lang: c.lang } : {}),
    ...(c.version ? { ver: c.version } : {}),
    ...(stopMs !== undefined ? { stop: new Date(stopMs).toISOString() } : {}),
    name_tag: c.account,
    kind: 'Client',
    client_type: 'nats',
  };
}

export function connectEvent(c: ClientConnection, server: Record<string, unknown>): Record<string, unknown> {
  return { type: CONNECT_EVENT_TYPE, id: newEventId(), timestamp: new Date().toISOString(), server, client: clientInfo(c) };
}

/** A disconnect, or an auth error (same shape): `sent` is what the client sent, `received` what it got. */
export function disconnectEvent(c: ClientConnection, server: Record<string, unknown>, reason: string): Record<string, unknown> {
  const nowMs = Date.now();
  return {
    type: DISCONNECT_EVENT_TYPE,
    id: newEventId(),
    timestamp: new Date(nowMs).toISOString(),
    server,
    client: clientInfo(c, nowMs),
    sent: { msgs: c.inMsgs, bytes: c.inBytes },
    received: { msgs: c.outMsgs, bytes: c.outBytes },
    reason,
  };
}
