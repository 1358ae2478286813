// The `server` object every system message carries (nats-server's ServerInfo): who sent it, with a
// sequence number that goes up by one per message this server sends and the time it was sent.
import type { FlotillaServer } from '../server.js';
import { ADVERTISED_NATS_VERSION } from '../version.js';
import { jetStreamRuns } from '../monitored-jetstreams.js';

/**
 * nats-server's ServerCapability bits (events.go), set only with JetStream as nats-server does:
 * JetStreamEnabled; BinaryStreamSnapshot (a stream group's Raft snapshot is a binary image, not JSON: Flotilla's
 * is, stream-replica-snapshot.ts). AccountNRG (1 << 2, Raft traffic moved into the stream's own account) stays
 * clear: Flotilla's Raft traffic runs on the cluster's gRPC links, in no account.
 */
const JETSTREAM_ENABLED_FLAG = 1 << 0;
const BINARY_STREAM_SNAPSHOT_FLAG = 1 << 1;
const JETSTREAM_FLAGS = JETSTREAM_ENABLED_FLAG | BINARY_STREAM_SNAPSHOT_FLAG;

export class ServerInfoStamp {
  private seq = 0;

  constructor(private readonly server: FlotillaServer) {}

  /** A fresh `server` object: the next sequence number and the current time. */
  next(): Record<string, unknown> {
    const s = this.server;
    // with accounts JetStream runs even when no account has it (nats-server's s.info.JetStream)
    const js = jetStreamRuns(s);
    const cluster = s.cluster?.node.clusterName || s.options.cluster?.name;
    const domain = s.options.jetstream.domain;
    return {
      name: s.serverName,
      host: s.options.host,
      id: s.serverId,
      ...(cluster ? { cluster } : {}),
      ...(domain ? { domain } : {}),
      ver: ADVERTISED_NATS_VERSION,
      jetstream: js,
      flags: js ? JETSTREAM_FLAGS : 0,
      seq: ++this.seq,
      time: new Date().toISOString(),
    };
  }
}
