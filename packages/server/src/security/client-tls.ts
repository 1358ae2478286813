// Client TLS the way nats-server 2.9 does it: INFO goes out in plain text (with tls_required), then the
// server expects the client's TLS handshake on the same socket. With verify, a client certificate signed by
// the CA is required. The handshake must finish within the configured timeout.
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { TLSSocket, createSecureContext, type SecureContext } from 'node:tls';
import type { TlsOptions } from '../config/options.js';

export class ClientTls {
  private readonly context: SecureContext;

  /** Reads the certificate files; throws with the file's problem so the server refuses to start. */
  constructor(readonly options: TlsOptions) {
    const read = (what: string, file: string): Buffer => {
      try {
        return readFileSync(file);
      } catch (err) {
        throw new Error(`error loading TLS ${what} "${file}": ${(err as Error).message}`);
      }
    };
    const cert = read('certificate', options.certFile);
    const key = read('private key', options.keyFile);
    const ca = options.caFile !== undefined ? read('CA', options.caFile) : undefined;
    try {
      this.context = createSecureContext({ cert, key, ...(ca ? { ca } : {}) });
    } catch (err) {
      throw new Error(`error parsing TLS certificate/key pair: ${(err as Error).message}`);
    }
  }

  get verify(): boolean {
    return this.options.verify || this.options.verifyAndMap;
  }

  /**
   * Wraps a socket that was just sent INFO. `onTimeout` runs if the handshake has not completed within
   * the timeout; handshake errors surface as the returned socket's 'error' before its 'secure' event.
   */
  upgrade(raw: Socket, onTimeout: () => void): TLSSocket {
    const verify = this.verify;
    const socket = new TLSSocket(raw, { isServer: true, secureContext: this.context, requestCert: verify, rejectUnauthorized: verify });
    const timer = setTimeout(onTimeout, this.options.timeoutMs);
    timer.unref();
    const done = (): void => clearTimeout(timer);
    socket.once('secure', done);
    socket.once('close', done);
    return socket;
  }
}
