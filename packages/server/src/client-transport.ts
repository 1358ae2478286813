import type { X509Certificate } from 'node:crypto';

// What a client connection writes to and reads through: a TCP (or TLS) socket, or the WebSocket adapter
// (websocket/websocket-transport.ts), which turns frames into this same byte stream. Only what
// ClientConnection and OutboundBuffer use is here, so a net.Socket is one as it is.
export interface ClientTransport {
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
  /** bytes handed over but not yet sent (the slow-consumer checks add it to the pending output) */
  readonly writableLength: number;
  /** true once the peer stopped reading long enough that the buffer is over its mark: the write deadline runs */
  readonly writableNeedDrain: boolean;
  write(bytes: Uint8Array): unknown;
  cork(): void;
  uncork(): void;
  pause(): unknown;
  resume(): unknown;
  /** a graceful close after what was written */
  end(): unknown;
  /** an immediate close; what is buffered is dropped */
  destroy(): unknown;
  once(event: 'drain', listener: () => void): unknown;
  /** the verified client certificate of a transport that is not itself a TLSSocket (wss), for verify_and_map */
  peerCertificate?(): X509Certificate | undefined;
  /** CONNECT fields the transport carries outside the protocol (WebSocket cookies), used where CONNECT leaves them empty */
  readonly connectDefaults?: Readonly<Record<string, string>>;
}
