// The WebSocket adapter under a ClientConnection: what the connection writes becomes binary frames (one
// frame per flush, as nats-server collapses its pending buffers), and incoming messages are fed to the
// same parser as TCP bytes (websocket-listener.ts). Back-pressure is the underlying socket's.
import type { X509Certificate } from 'node:crypto';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { WebSocket } from 'ws';
import type { ClientTransport } from '../client-transport.js';
import type { CloseReason } from '../client-connection.js';
import { closeStatusFor } from './close-status.js';

export class WebSocketTransport implements ClientTransport {
  private corked = 0;
  private pieces: Uint8Array[] = [];
  /** why the connection is closing: read when end() sends the close frame */
  closeReason: () => CloseReason | null = () => null;

  constructor(
    private readonly ws: WebSocket,
    /** the TCP (or TLS) socket the upgrade took over */
    private readonly raw: Socket,
    /** the client's address: X-Forwarded-For when it holds an IP, as nats-server takes it */
    readonly remoteAddress: string | undefined,
    readonly remotePort: number | undefined,
    /** credentials from the handshake's cookies (user_cookie, …) */
    readonly connectDefaults: Readonly<Record<string, string>> | undefined,
  ) {}

  /** wss: the client certificate the listener verified */
  peerCertificate(): X509Certificate | undefined {
    return this.raw instanceof TLSSocket ? this.raw.getPeerX509Certificate() : undefined;
  }

  get writableLength(): number {
    // frames queued in ws (e.g. waiting for deflate) plus the socket's own buffer
    return this.ws.bufferedAmount;
  }

  get writableNeedDrain(): boolean {
    return this.raw.writableNeedDrain;
  }

  write(bytes: Uint8Array): boolean {
    if (this.corked > 0) this.pieces.push(bytes);
    else this.ws.send(bytes, { binary: true });
    return true;
  }

  cork(): void {
    this.corked++;
  }

  uncork(): void {
    if (this.corked === 0 || --this.corked > 0) return;
    const pieces = this.pieces;
    this.pieces = [];
    if (pieces.length === 1) this.ws.send(pieces[0]!, { binary: true });
    else if (pieces.length > 1) this.ws.send(Buffer.concat(pieces), { binary: true });
  }

  pause(): void {
    this.ws.pause();
  }

  resume(): void {
    this.ws.resume();
  }

  /** The close frame with nats-server's status and the reason as its body; ws then ends the socket. */
  end(): void {
    const reason = this.closeReason();
    this.ws.close(closeStatusFor(reason), reason ?? '');
  }

  destroy(): void {
    this.ws.terminate();
  }

  once(event: 'drain', listener: () => void): void {
    this.raw.once(event, listener);
  }
}
