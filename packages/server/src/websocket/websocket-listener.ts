// The `websocket {}` listener: an HTTP(S) server whose every request is a WebSocket handshake, checked as
// nats-server checks it (handshake-check.ts), then upgraded by the `ws` library (framing, masking,
// fragments, control frames, permessage-deflate). Each upgraded socket is handed to the server, which
// runs the ordinary ClientConnection over a WebSocketTransport.
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { isIP, type AddressInfo, type Socket } from 'node:net';
import type { Logger } from 'pino';
// first: it replaces ws's JS unmask before ws's receiver takes it
import './word-unmask.js';
import { WebSocketServer, type WebSocket } from 'ws';
import type { WebsocketOptions } from '../config/options.js';
import { handshakeRefusal, rawRefusal, refusalResponse } from './handshake-check.js';
import { OriginPolicy } from './origin-policy.js';
import { cookieCredentials } from './cookie-credentials.js';
import { WebSocketTransport } from './websocket-transport.js';

/** Compressed messages are buffered whole before parsing: up to this many max_payloads (nats-server's wsMaxMessageSize). */
const MAX_MESSAGE_PAYLOAD_MULTIPLE = 8;
const MAX_MESSAGE_BYTES_LIMIT = 64 * 1024 * 1024;
/** nats-server compresses nothing this small (wsCompressThreshold). */
const COMPRESS_THRESHOLD_BYTES = 64;

export function maxWebSocketMessageBytes(maxPayloadBytes: number): number {
  return Math.min(maxPayloadBytes * MAX_MESSAGE_PAYLOAD_MULTIPLE, MAX_MESSAGE_BYTES_LIMIT);
}

/** What the listener gives the server for each upgraded connection. */
export interface UpgradedClient {
  ws: WebSocket;
  transport: WebSocketTransport;
}

export class WebsocketListener {
  private readonly http: HttpServer;
  private readonly wss: WebSocketServer;
  private readonly origins: OriginPolicy;
  readonly tls: boolean;
  private boundPort = 0;

  constructor(
    private readonly options: WebsocketOptions,
    maxPayloadBytes: number,
    private readonly log: Logger,
    private readonly onClient: (client: UpgradedClient) => void,
  ) {
    const tls = options.tls;
    this.tls = tls !== undefined;
    this.origins = new OriginPolicy(options.sameOrigin, options.allowedOrigins, this.tls);
    this.wss = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      maxPayload: maxWebSocketMessageBytes(maxPayloadBytes),
      // nats-server does not check text frames for UTF-8: they carry protocol bytes like binary ones
      skipUTF8Validation: true,
      perMessageDeflate: options.compression
        ? { threshold: COMPRESS_THRESHOLD_BYTES, serverNoContextTakeover: true, clientNoContextTakeover: true }
        : false,
    });
    const extraHeaders = Object.entries(options.headers ?? {}).map(([k, v]) => `${k}: ${v}`);
    if (extraHeaders.length > 0) this.wss.on('headers', (headers: string[]) => headers.push(...extraHeaders));
    if (tls !== undefined) {
      // Unreadable certificate files fail here, before anything listens.
      const read = (file: string): Buffer => readFileSync(file);
      const verify = tls.verify || tls.verifyAndMap;
      this.http = createHttpsServer({
        cert: read(tls.certFile),
        key: read(tls.keyFile),
        ...(tls.caFile !== undefined ? { ca: read(tls.caFile) } : {}),
        requestCert: verify,
        rejectUnauthorized: verify,
        handshakeTimeout: tls.timeoutMs,
      });
    } else this.http = createHttpServer();
    // Every plain request is a failed handshake (no Upgrade header, or not a GET).
    this.http.on('request', (req, res) => {
      const refusal = handshakeRefusal(req, Buffer.alloc(0), this.origins) ?? { status: 400 as const, reason: "invalid value for header 'Upgrade'" };
      this.log.error({ remote: `${req.socket.remoteAddress}:${req.socket.remotePort}`, reason: refusal.reason }, 'websocket handshake error');
      const r = refusalResponse(refusal.status);
      res.writeHead(refusal.status, r.statusText, r.headers).end(r.body);
    });
    this.http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.upgrade(req, socket, head));
    if (options.handshakeTimeoutMs > 0) {
      const timeoutMs = options.handshakeTimeoutMs;
      this.http.on(tls !== undefined ? 'secureConnection' : 'connection', (socket: Socket) => {
        const timer = setTimeout(() => {
          if (!upgraded.has(socket)) socket.destroy();
        }, timeoutMs);
        timer.unref();
        socket.once('close', () => clearTimeout(timer));
      });
    }
    const upgraded = new WeakSet<Socket>();
    this.markUpgraded = (s) => upgraded.add(s);
    this.http.on('clientError', (err: Error, socket: Socket) => {
      this.log.debug({ err: err.message }, 'websocket http client error');
      socket.destroy();
    });
  }

  private readonly markUpgraded: (socket: Socket) => void;

  get port(): number {
    return this.boundPort;
  }

  async start(): Promise<void> {
    const o = this.options;
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen({ host: o.host === '' ? '0.0.0.0' : o.host, port: o.port < 0 ? 0 : o.port }, () => {
        this.http.off('error', reject);
        resolve();
      });
    });
    this.boundPort = (this.http.address() as AddressInfo).port;
    this.http.on('error', (err) => this.log.error({ err: String(err) }, 'websocket listener error'));
  }

  /** Stops accepting; connections already upgraded are the server's to close. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.http.listening) return resolve();
      this.http.close(() => resolve());
      this.http.closeIdleConnections();
    });
  }

  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const refusal = handshakeRefusal(req, head, this.origins);
    if (refusal !== null) {
      this.log.error({ remote: `${socket.remoteAddress}:${socket.remotePort}`, reason: refusal.reason }, 'websocket handshake error');
      socket.on('error', () => undefined);
      socket.end(rawRefusal(refusal.status));
      return;
    }
    this.markUpgraded(socket);
    const forwarded = req.headers['x-forwarded-for'];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.trim();
    const ip = first !== undefined && isIP(first) !== 0 ? first : socket.remoteAddress;
    const port = socket.remotePort;
    const credentials = cookieCredentials(req, this.options);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.onClient({ ws, transport: new WebSocketTransport(ws, socket, ip, port, credentials) });
    });
  }
}
