// Mutual TLS for cluster links: every node is both a TLS server (its listener) and a TLS client (its
// dials) with one certificate; both directions require a certificate signed by the cluster CA, as
// nats-server forces verify for routes.
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';

/** File paths, nats-server's cluster `tls {}` block. */
export interface ClusterTlsFiles {
  certFile: string;
  keyFile: string;
  caFile: string;
}

export interface ClusterTlsMaterial {
  cert: Buffer;
  key: Buffer;
  ca: Buffer;
}

export function loadClusterTls(files: ClusterTlsFiles): ClusterTlsMaterial {
  return { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile), ca: readFileSync(files.caFile) };
}

/** Listener credentials: a client presenting no certificate, or one not signed by the CA, is refused. */
export function serverCredentials(tls: ClusterTlsMaterial | undefined): grpc.ServerCredentials {
  if (tls === undefined) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(tls.ca, [{ cert_chain: tls.cert, private_key: tls.key }], true);
}

/** Dial credentials: present this node's certificate and check the peer's against the CA. */
export function channelCredentials(tls: ClusterTlsMaterial | undefined): grpc.ChannelCredentials {
  if (tls === undefined) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(tls.ca, tls.key, tls.cert);
}

type TlsErrorListener = (err: Error & { code?: string }, socket: { remoteAddress?: string; remotePort?: number }) => void;

/**
 * Reports TLS handshakes the listener rejected (no certificate, wrong CA), which gRPC itself swallows.
 * grpc-js keeps its HTTP/2 servers in a private map; when that is absent nothing is reported.
 */
export function onTlsClientError(server: grpc.Server, fn: TlsErrorListener): void {
  const servers = (server as unknown as { http2Servers?: Map<{ on?: (ev: string, f: TlsErrorListener) => void }, unknown> }).http2Servers;
  if (!(servers instanceof Map)) return;
  for (const s of servers.keys()) s.on?.('tlsClientError', fn);
}
