// Client TLS the way nats-server 2.9 does it: INFO goes out in plain text (with tls_required), then the
// server expects the client's TLS handshake on the same socket. With verify, a client certificate signed by
// the CA is required. The handshake must finish within the configured timeout.
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { TLSSocket, createSecureContext, type SecureContext } from 'node:tls';
import type { TlsOptions } from '../config/options.js';

export class ClientTls {
  private context: SecureContext;

  /** Reads the certificate files; throws with the file's problem so the server refuses to start. */
  constructor(public options: TlsOptions) {
    this.context = ClientTls.contextOf(options);
  }

  /** A config reload's new certificates (and verify/timeout) for the handshakes from now on; throws like the constructor. */
  reload(options: TlsOptions): void {
    this.context = ClientTls.contextOf(options);
    this.options = options;
  }

  private static contextOf(options: TlsOptions): SecureContext {
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
      return createSecureContext({ cert, key, ...(ca ? { ca } : {}) });
    } catch (err) {
      throw new Error(`error parsing TLS certificate/key pair: ${(err as Error).message}`);
    }
  }

  get verify(): boolean {
    return this.options.verify || this.options.verifyAndMap;
  }

  /**
   * Wraps a socket that was just sent INFO. `onReady` runs once the handshake is done (and, with verify,
   * the client certificate checked against the CA); `onFailure` runs on a timeout or a refused certificate.
   * Other handshake errors surface as the returned socket's 'error' before `onReady`.
   */
  upgrade(raw: Socket, onReady: () => void, onFailure: (why: string) => void): TLSSocket {
    const verify = this.verify;
    // A bare server-side TLSSocket does not act on rejectUnauthorized (tls.Server does, in a listener it
    // does not export): the certificate is checked on 'secure' below.
    const socket = new TLSSocket(raw, { isServer: true, secureContext: this.context, requestCert: verify, rejectUnauthorized: verify });
    const timer = setTimeout(() => onFailure('timeout'), this.options.timeoutMs);
    timer.unref();
    socket.once('secure', () => {
      clearTimeout(timer);
      if (verify) {
        const problem = clientCertificateProblem(socket);
        if (problem !== null) return onFailure(problem);
      }
      onReady();
    });
    socket.once('close', () => clearTimeout(timer));
    return socket;
  }
}

/**
 * Why the client's certificate is not acceptable, or null. Uses the same OpenSSL verification result that
 * tls.Server consults (`verifyError` on the TLS handle); without it, refuses (fails closed).
 */
function clientCertificateProblem(socket: TLSSocket): string | null {
  if (socket.getPeerX509Certificate() === undefined) return "client didn't provide a certificate";
  const handle = (socket as unknown as { _handle?: { verifyError?: () => (Error & { code?: string }) | null } })._handle;
  if (typeof handle?.verifyError !== 'function') return 'client certificate could not be verified';
  const err = handle.verifyError();
  return err === null || err === undefined ? null : `client certificate: ${err.code ?? err.message}`;
}
