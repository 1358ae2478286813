// The checks nats-server's wsUpgrade makes of an HTTP request before it switches to WebSocket (RFC 6455
// §4.2.1), in its order and with its statuses. The reason goes to the log; the client sees only the status.
import type { IncomingMessage } from 'node:http';
import type { OriginPolicy } from './origin-policy.js';

export interface HandshakeRefusal {
  status: 400 | 403 | 405;
  reason: string;
}

/** Whether the comma-separated header `name` holds the token `value` (any case). */
function headerHas(req: IncomingMessage, name: string, value: string): boolean {
  const raw = req.headers[name];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return lines.some((line) => line.split(',').some((t) => t.trim().toLowerCase() === value.toLowerCase()));
}

/** null when the request may be upgraded. `head`: bytes the client sent after the request. */
export function handshakeRefusal(req: IncomingMessage, head: Buffer, origins: OriginPolicy): HandshakeRefusal | null {
  if (req.method !== 'GET') return { status: 405, reason: 'request method must be GET' };
  const host = req.headers.host;
  if (host === undefined || host === '') return { status: 400, reason: "'Host' missing in request" };
  if (!headerHas(req, 'upgrade', 'websocket')) return { status: 400, reason: "invalid value for header 'Upgrade'" };
  if (!headerHas(req, 'connection', 'upgrade')) return { status: 400, reason: "invalid value for header 'Connection'" };
  const key = req.headers['sec-websocket-key'];
  if (key === undefined || key === '') return { status: 400, reason: 'key missing' };
  if (!/^[A-Za-z0-9+/]{22}==$/.test(key)) return { status: 400, reason: 'invalid websocket key' };
  if (!headerHas(req, 'sec-websocket-version', '13')) return { status: 400, reason: 'invalid version' };
  const origin = req.headers.origin ?? (req.headers['sec-websocket-origin'] as string | undefined);
  const originProblem = origins.check(origin, host);
  if (originProblem !== null) return { status: 403, reason: `origin not allowed: ${originProblem}` };
  if (head.length > 0) return { status: 400, reason: 'client sent data before handshake is complete' };
  return null;
}

const STATUS_TEXT: Record<HandshakeRefusal['status'], string> = { 400: 'Bad Request', 403: 'Forbidden', 405: 'Method Not Allowed' };

/** The response as Go's http.Error writes it (nats-server adds Sec-Websocket-Version). */
export function refusalResponse(status: HandshakeRefusal['status']): { statusText: string; headers: Record<string, string>; body: string } {
  const body = `${STATUS_TEXT[status]}\n`;
  return {
    statusText: STATUS_TEXT[status],
    headers: {
      'Content-Type': 'text/plain; charset=utf-8',
      'Sec-Websocket-Version': '13',
      'X-Content-Type-Options': 'nosniff',
      'Content-Length': String(Buffer.byteLength(body)),
    },
    body,
  };
}

/** The same response, written raw on a socket the HTTP server handed over for an upgrade. */
export function rawRefusal(status: HandshakeRefusal['status']): string {
  const r = refusalResponse(status);
  const headers = Object.entries({ ...r.headers, Date: new Date().toUTCString(), Connection: 'close' })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return `HTTP/1.1 ${status} ${r.statusText}\r\n${headers}\r\n${r.body}`;
}
